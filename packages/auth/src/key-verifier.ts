import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { VaultRpc, VaultSignals, type Principal } from '@runplane/contracts';
import { Bus, type Subscription } from '@runplane/bus';
import { hashApiKey } from './api-key.js';

interface CacheEntry {
  principal: Principal | null;
  expires: number;
}

/**
 * Resolves presented keys through secrets-vault, with a short cache so the hot path (thousands of
 * /run per second) does not ask the vault every time. A revocation reaches every instance at once
 * by signal, and the TTL bounds it even if the signal is lost (contract: effective within 5 s).
 */
@Injectable()
export class ApiKeyVerifier implements OnModuleInit, OnModuleDestroy {
  static readonly POSITIVE_TTL_MS = 3000;
  static readonly NEGATIVE_TTL_MS = 1000;
  private static readonly MAX_ENTRIES = 10_000;

  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<Principal | null>>();
  private subscription?: Subscription;

  constructor(private readonly bus: Bus) {}

  async onModuleInit(): Promise<void> {
    this.subscription = await this.bus.onSignal(
      VaultSignals.apiKeyRevoked,
      ({ keyHash }) => void this.cache.delete(keyHash),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscription?.stop();
  }

  async verify(key: string): Promise<Principal | null> {
    const keyHash = hashApiKey(key);
    const hit = this.cache.get(keyHash);
    if (hit && hit.expires > Date.now()) return hit.principal;
    let pending = this.inflight.get(keyHash);
    if (!pending) {
      pending = this.lookup(keyHash).finally(() => this.inflight.delete(keyHash));
      this.inflight.set(keyHash, pending);
    }
    return pending;
  }

  private async lookup(keyHash: string): Promise<Principal | null> {
    const { principal } = await this.bus.request(
      VaultRpc.verifyApiKey,
      { keyHash },
      { timeoutMs: 5000 },
    );
    if (this.cache.size >= ApiKeyVerifier.MAX_ENTRIES)
      this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(keyHash, {
      principal,
      expires:
        Date.now() + (principal ? ApiKeyVerifier.POSITIVE_TTL_MS : ApiKeyVerifier.NEGATIVE_TTL_MS),
    });
    return principal;
  }
}
