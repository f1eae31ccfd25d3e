import { Injectable } from '@nestjs/common';
import { generateWebhookSecret, type SigningSecretResponse } from '@runplane/contracts';
import { MasterKeyring } from '../crypto/master-keyring.js';
import {
  signingSecretAad,
  WebhookSigningRepository,
  type SigningSecretRow,
} from './webhook-signing.repository.js';

/** Each account's webhook signing secret: made on first use, kept sealed, given only to webhook-sender. */
@Injectable()
export class WebhookSigningService {
  constructor(
    private readonly secrets: WebhookSigningRepository,
    private readonly keyring: MasterKeyring,
  ) {}

  async signingSecret(userId: string): Promise<SigningSecretResponse> {
    const row =
      (await this.secrets.find(userId)) ??
      (await this.secrets.createOrGet({
        userId,
        ...this.keyring.seal(generateWebhookSecret(), signingSecretAad(userId)),
      }));
    return { secret: this.open(row) };
  }

  private open(row: SigningSecretRow): string {
    return this.keyring.open(
      { ciphertext: row.ciphertext, wrappedKey: row.wrappedKey, keyId: row.keyId },
      signingSecretAad(row.userId),
    );
  }
}
