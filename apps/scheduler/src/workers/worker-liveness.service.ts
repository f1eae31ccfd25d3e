import { Inject, Injectable } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository } from '../store/endpoints.repository.js';
import { JobTimersRepository } from '../store/job-timers.repository.js';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import { SchedulerSettings } from '../settings.js';
import type { LostWorker } from '../store/workers.repository.js';

/** What happens when a worker is found dead (silent, failed its checks, stopped). */
@Injectable()
export class WorkerLiveness {
  constructor(
    private readonly jobs: JobTimersRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly changes: JobChanges,
    private readonly settings: SchedulerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Its running jobs go back to the queue (retries + 1) or, taken too often, fail; a
   * managed worker that never came up or died young counts as a failed start, so a crash-looping
   * template backs off (unless `notItsFault`: its host went down with it). `reason` is recorded
   * with each job's REQUEUED or FAILED event.
   */
  async lost(
    workers: LostWorker[],
    now: Date,
    reason: string,
    { notItsFault = false } = {},
  ): Promise<void> {
    for (const w of workers) {
      // The back-off first: requeueing wakes the autoscaler, which must already see it.
      if (w.managed && w.diedYoung && !notItsFault)
        await this.endpoints.recordStartFailure(w.endpointId, this.settings.startBackoff, now);
      const { requeued, failed } = await this.jobs.requeueFromWorker(
        w.endpointId,
        w.id,
        now,
        reason,
      );
      this.logger.warn(
        {
          endpointId: w.endpointId,
          workerId: w.id,
          managed: w.managed,
          reason,
          requeued: requeued.map((j) => j.id),
          failed: failed.map((j) => j.id),
        },
        'worker is unhealthy; its jobs go back to the queue',
      );
      this.changes.changed(w.endpointId, ANY_JOB, { scaling: true });
    }
  }
}
