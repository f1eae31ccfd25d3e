import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { WebhookVaultRpc } from '@runplane/contracts';

const CACHE_MS = 60_000;

/** Each account's signing secret, from the vault (which keeps it), cached briefly in memory only. */
@Injectable()
export class SigningSecrets {
  private readonly cache = new Map<string, { secret: string; at: number }>();

  constructor(private readonly bus: Bus) {}

  async forOwner(userId: string): Promise<string> {
    const hit = this.cache.get(userId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.secret;
    const { secret } = await this.bus.request(WebhookVaultRpc.signingSecret, { userId });
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(userId, { secret, at: Date.now() });
    return secret;
  }
}
