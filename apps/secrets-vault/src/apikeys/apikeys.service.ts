import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { generateApiKey, hashApiKey } from '@runplane/auth';
import { Bus } from '@runplane/bus';
import {
  RunplaneError,
  VaultSignals,
  type MintWorkerKeyRequest,
  type MintWorkerKeyResponse,
  type RetiredWorkerKeys,
  type VerifyApiKeyResponse,
} from '@runplane/contracts';
import { LOGGER, RunplaneConfig, type Logger } from '@runplane/platform';
import { randomUUID } from 'node:crypto';
import { ApiKeysRepository } from './apikeys.repository.js';

@Injectable()
export class ApiKeysService implements OnApplicationBootstrap {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly bus: Bus,
    private readonly config: RunplaneConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async verify(keyHash: string): Promise<VerifyApiKeyResponse> {
    return { principal: await this.keys.principalFor(keyHash) };
  }

  /**
   * A key that may use only `endpointId`'s worker routes (a managed worker's RUNPOD_AI_API_KEY).
   * The key is returned once and only its hash is kept. Users are created by admin routes, so an
   * unknown user is a 404 rather than a user created on the fly.
   */
  async mintWorkerKey({
    userId,
    endpointId,
    workerId,
  }: MintWorkerKeyRequest): Promise<MintWorkerKeyResponse> {
    const unknownUser = () => RunplaneError.notFound(`user ${userId} not found`, 'USER_NOT_FOUND');
    if (!(await this.keys.userExists(userId))) throw unknownUser();
    const key = generateApiKey();
    const keyId = `key_${randomUUID().replaceAll('-', '')}`;
    if (
      !(await this.keys.createWorkerKey({
        id: keyId,
        userId,
        endpointId,
        workerId,
        keyHash: hashApiKey(key),
      }))
    )
      throw unknownUser();
    return { keyId, key };
  }

  /** The keys of workers that ended: deleted, and dropped from every instance's key cache. */
  async retireWorkerKeys(workerIds: string[]): Promise<RetiredWorkerKeys> {
    return this.retired(workerIds.length ? await this.keys.retireWorkerKeys(workerIds) : []);
  }

  /** The scheduler's periodic reconciliation: keys of workers it no longer knows are retired. */
  async keepWorkerKeys(liveWorkerIds: string[], mintedBefore: Date): Promise<RetiredWorkerKeys> {
    return this.retired(await this.keys.retireWorkerKeysExcept(liveWorkerIds, mintedBefore));
  }

  private async retired(hashes: string[]): Promise<RetiredWorkerKeys> {
    for (const keyHash of hashes) await this.bus.signal(VaultSignals.apiKeyRevoked, { keyHash });
    return { retired: hashes.length };
  }

  /**
   * RUNPLANE_API_KEY, when set, is an admin key from the start; otherwise, if no admin
   * key exists yet, one is generated and printed once (it cannot be shown again).
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.keys.ensureBootstrapUser();
    if (this.config.RUNPLANE_API_KEY) {
      await this.keys.setBootstrapKey(hashApiKey(this.config.RUNPLANE_API_KEY));
      return;
    }
    const key = generateApiKey();
    if (await this.keys.createBootstrapKeyIfNoAdmin(hashApiKey(key))) {
      this.logger.warn(
        'no RUNPLANE_API_KEY was set and no admin key existed: generated one (shown once on stdout)',
      );
      process.stdout.write(`\n  Runplane admin API key (shown once, store it now): ${key}\n\n`);
    }
  }
}
