import { Injectable } from '@nestjs/common';
import { PrismaClient, type WebhookSigningSecret } from '../generated/prisma/client.js';

export type SigningSecretRow = WebhookSigningSecret;

/** Data access of webhook signing secrets (ciphertext only). */
@Injectable()
export class WebhookSigningRepository {
  constructor(private readonly db: PrismaClient) {}

  find(userId: string): Promise<SigningSecretRow | null> {
    return this.db.webhookSigningSecret.findUnique({ where: { userId } });
  }

  /** Stores the first secret of the user; when a concurrent call stored one first, that one wins. */
  async createOrGet(row: Omit<SigningSecretRow, 'createdAt'>): Promise<SigningSecretRow> {
    await this.db.webhookSigningSecret.createMany({ data: [row], skipDuplicates: true });
    return this.db.webhookSigningSecret.findUniqueOrThrow({ where: { userId: row.userId } });
  }
}
