import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { RegistryAuthsRepository } from '../registry-auths/registry-auths.repository.js';
import { SecretsRepository } from '../secrets/secrets.repository.js';
import { WebhookSigningRepository } from '../webhook-signing/webhook-signing.repository.js';
import { MasterKeyring, type SealedValue } from './master-keyring.js';
import type { SealedStore } from './sealed-store.js';

/**
 * After a master key rotation (the new key in RUNPLANE_MASTER_KEY, the old one in
 * RUNPLANE_MASTER_KEY_PREVIOUS), every sealed value the vault keeps — template secrets, webhook
 * signing secrets and container registry credentials — gets its data key re-sealed with the current key at start. Values themselves
 * are not re-encrypted. Once this has run (the log says so), the previous key can be removed.
 */
@Injectable()
export class KeyRotation implements OnApplicationBootstrap {
  private readonly stores: ReadonlyArray<SealedStore<SealedValue>>;

  constructor(
    private readonly keyring: MasterKeyring,
    secrets: SecretsRepository,
    signing: WebhookSigningRepository,
    registryAuths: RegistryAuthsRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.stores = [secrets, signing, registryAuths] as unknown as ReadonlyArray<
      SealedStore<SealedValue>
    >;
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const store of this.stores) await this.rotate(store);
  }

  private async rotate(store: SealedStore<SealedValue>): Promise<void> {
    let moved = 0;
    let stuck = 0;
    const seen = new Set<string>();
    for (;;) {
      const rows = (await store.findNotWrappedWith(this.keyring.currentKeyId, 100)).filter(
        (r) => !seen.has(store.aadOf(r)),
      );
      if (!rows.length) break;
      for (const row of rows) {
        seen.add(store.aadOf(row));
        if (!this.keyring.knows(row.keyId)) stuck++;
        else if (await store.rewrap(row, this.keyring.rewrap(row, store.aadOf(row)))) moved++;
      }
    }
    if (moved)
      this.logger.info(
        { rows: moved, keyId: this.keyring.currentKeyId },
        `re-wrapped ${store.what} with the current master key`,
      );
    if (stuck) {
      this.logger.error(
        { rows: stuck },
        `some ${store.what} are sealed with a master key that is not configured: they cannot be opened ` +
          'until that key is given in RUNPLANE_MASTER_KEY_PREVIOUS',
      );
    }
  }
}
