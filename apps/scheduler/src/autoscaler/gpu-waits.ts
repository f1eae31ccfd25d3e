import { Inject, Injectable } from '@nestjs/common';
import type { GpuShortage } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository, type EndpointRow } from '../store/endpoints.repository.js';
import { SchedulerSettings } from '../settings.js';
import { WorkersRepository } from '../store/workers.repository.js';
import { WorkerKeys } from '../workers/worker-keys.js';

/** Delay before the next start of an endpoint whose worker found too few free GPUs. */
const GPU_RETRY_MS = 2000;

/**
 * Worker starts pod-rest answered with a GPU shortage (the machine's GPUs are handed out whole and
 * exclusively): the endpoint records it for its waiting reasons (GPUS_BUSY, NOT_ENOUGH_GPUS).
 * Busy GPUs: the worker row goes (no history per try) and the start is tried again soon, with no
 * back-off; more GPUs than the machine has: a refused start, which backs off.
 */
@Injectable()
export class GpuWaits {
  /** Endpoints whose last start found too few free GPUs: their next start waits until then. */
  private readonly retryAt = new Map<string, number>();

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly workers: WorkersRepository,
    private readonly keys: WorkerKeys,
    private readonly settings: SchedulerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Whether the endpoint's next start waits for GPUs to be freed. */
  holding(endpointId: string, now: Date): boolean {
    return (this.retryAt.get(endpointId) ?? 0) > now.getTime();
  }

  /** A start that got its GPUs, or was refused for another reason: the shortage no longer says why. */
  async cleared(endpoint: Pick<EndpointRow, 'id' | 'gpuShortage'>): Promise<void> {
    this.retryAt.delete(endpoint.id);
    if (endpoint.gpuShortage !== null) await this.endpoints.recordGpuShortage(endpoint.id, null);
  }

  /** pod-rest started nothing for `workerId`: too few free GPUs. */
  async lacked(endpoint: EndpointRow, workerId: string, shortage: GpuShortage): Promise<false> {
    const now = new Date();
    await this.endpoints.recordGpuShortage(endpoint.id, { ...shortage, at: now.toISOString() });
    await this.keys.retire([workerId]);
    if (shortage.needed > shortage.total) {
      const reason = `start refused: a worker needs ${shortage.needed} GPUs and this machine has ${shortage.total} (NOT_ENOUGH_GPUS)`;
      await this.workers.markStartRefused(endpoint.id, workerId, reason, now);
      await this.endpoints.recordStartFailure(endpoint.id, this.settings.startBackoff, now);
      this.logger.warn({ endpointId: endpoint.id, ...shortage }, reason);
    } else {
      await this.workers.delete(endpoint.id, workerId);
      this.retryAt.set(endpoint.id, now.getTime() + GPU_RETRY_MS);
      this.logger.debug({ endpointId: endpoint.id, ...shortage }, 'worker waits for GPUs');
    }
    return false;
  }
}
