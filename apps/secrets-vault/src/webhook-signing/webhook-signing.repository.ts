import { Injectable } from '@nestjs/common';
import type { SealedStore } from '../crypto/sealed-store.js';
import { PrismaClient, type WebhookSigningSecret } from '../generated/prisma/client.js';

export type SigningSecretRow = WebhookSigningSecret;

/** Data access of webhook signing secrets (ciphertext only). */
@Injectable()
export class WebhookSigningRepository implements SealedStore<SigningSecretRow> {
  constructor(private readonly db: PrismaClient) {}

  find(userId: string): Promise<SigningSecretRow | null> {
    return this.db.webhookSigningSecret.findUnique({ where: { userId } });
  }

  /** Stores the first secret of the user; when a concurrent call stored one first, that one wins. */
  async createOrGet(row: Omit<SigningSecretRow, 'createdAt'>): Promise<SigningSecretRow> {
    await this.db.webhookSigningSecret.createMany({ data: [row], skipDuplicates: true });
    return this.db.webhookSigningSecret.findUniqueOrThrow({ where: { userId: row.userId } });
  }

  readonly what = 'webhook signing secrets';

  findNotWrappedWith(currentKeyId: string, take: number): Promise<SigningSecretRow[]> {
    return this.db.webhookSigningSecret.findMany({
      where: { keyId: { not: currentKeyId } },
      take,
      orderBy: { userId: 'asc' },
    });
  }

  async rewrap(
    row: SigningSecretRow,
    to: Pick<SigningSecretRow, 'wrappedKey' | 'keyId'>,
  ): Promise<boolean> {
    const { count } = await this.db.webhookSigningSecret.updateMany({
      where: { userId: row.userId, keyId: row.keyId },
      data: to,
    });
    return count === 1;
  }

  aadOf(row: Pick<SigningSecretRow, 'userId'>): string {
    return signingSecretAad(row.userId);
  }
}

/** Binds the ciphertext to its user: moved to another row it no longer opens. */
export const signingSecretAad = (userId: string) => `webhook-signing:${userId}`;
