import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { VaultRpc } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { WorkersRepository } from '../store/workers.repository.js';

/**
 * The keys of managed workers (their RUNPOD_AI_API_KEY), minted by the vault for one worker id
 * and retired when that worker ends, so a key never outlives its worker: retired at once when the
 * worker is stopped or its start fails, and by a periodic reconciliation when that call was lost.
 */
@Injectable()
export class WorkerKeys {
  constructor(
    private readonly bus: Bus,
    private readonly workers: WorkersRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** A key that may act only as `workerId` on `endpointId`'s worker routes. */
  async mint(w: { ownerId: string; endpointId: string; workerId: string }): Promise<string> {
    const { key } = await this.bus.request(
      VaultRpc.mintWorkerKey,
      { userId: w.ownerId, endpointId: w.endpointId, workerId: w.workerId },
      { timeoutMs: 10_000 },
    );
    return key;
  }

  /** Best effort: a failure is caught up by `reconcile`. */
  async retire(workerIds: string[]): Promise<void> {
    try {
      await this.bus.request(VaultRpc.retireWorkerKeys, { workerIds }, { timeoutMs: 10_000 });
    } catch (err) {
      this.logger.warn(
        { workerIds, err: err instanceof Error ? err.message : String(err) },
        'could not retire worker keys now; the next reconciliation will',
      );
    }
  }

  /**
   * Retires every managed worker's key whose worker is no longer live. Keys minted after the list
   * was read are kept (their workers may be too new to be in it).
   */
  async reconcile(now: Date): Promise<number> {
    const mintedBefore = new Date(now.getTime() - 1000);
    const liveWorkerIds = await this.workers.liveManagedIds();
    const { retired } = await this.bus.request(
      VaultRpc.keepWorkerKeys,
      { liveWorkerIds, mintedBefore: mintedBefore.toISOString() },
      { timeoutMs: 10_000 },
    );
    if (retired) this.logger.info({ retired }, 'retired the keys of workers that are gone');
    return retired;
  }
}
