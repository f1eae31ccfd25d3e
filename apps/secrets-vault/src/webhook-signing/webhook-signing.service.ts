import { Injectable } from '@nestjs/common';
import { generateWebhookSecret, type SigningSecretResponse } from '@runplane/contracts';
import { MasterKeyring } from '../crypto/master-keyring.js';
import { WebhookSigningRepository, type SigningSecretRow } from './webhook-signing.repository.js';

/** Binds the ciphertext to its user: moved to another row it no longer opens. */
const aadOf = (userId: string) => `webhook-signing:${userId}`;

/** Each account's webhook signing secret: made on first use, kept sealed, given only to webhook-sender. */
@Injectable()
export class WebhookSigningService {
  constructor(private readonly secrets: WebhookSigningRepository, private readonly keyring: MasterKeyring) {}

  async signingSecret(userId: string): Promise<SigningSecretResponse> {
    const row = (await this.secrets.find(userId))
      ?? (await this.secrets.createOrGet({ userId, ...this.keyring.seal(generateWebhookSecret(), aadOf(userId)) }));
    return { secret: this.open(row) };
  }

  private open(row: SigningSecretRow): string {
    return this.keyring.open({ ciphertext: row.ciphertext, wrappedKey: row.wrappedKey, keyId: row.keyId }, aadOf(row.userId));
  }
}
