import { Inject, Injectable } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository } from '../endpoints/endpoints.repository.js';
import { JobsRepository } from '../jobs/jobs.repository.js';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import type { LostWorker } from './workers.repository.js';

/** Exponential back-off between failed worker starts of one endpoint: 2 s, 4 s, ... 5 min. */
export function startBackoffMs(failures: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(1, Math.min(failures, 20)));
}

/** What happens when a worker is found dead (silent, failed its checks, stopped). */
@Injectable()
export class WorkerLiveness {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly changes: JobChanges,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Its running jobs go back to the queue (retries + 1; contract §4); a managed worker that never
   * came up or died young counts as a failed start, so a crash-looping template backs off.
   */
  async lost(workers: LostWorker[], now: Date): Promise<void> {
    for (const w of workers) {
      const requeued = await this.jobs.requeueFromWorker(w.endpointId, w.id, now);
      this.logger.warn(
        {
          endpointId: w.endpointId,
          workerId: w.id,
          managed: w.managed,
          requeued: requeued.map((j) => j.id),
        },
        'worker is unhealthy; its jobs go back to the queue',
      );
      if (w.managed && w.diedYoung)
        await this.endpoints.recordStartFailure(w.endpointId, startBackoffMs, now);
      this.changes.changed(w.endpointId, ANY_JOB, { scaling: true });
    }
  }
}
