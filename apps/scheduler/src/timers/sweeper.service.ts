import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { LOGGER, type Logger } from '@runplane/platform';
import { EndpointsRepository } from '../store/endpoints.repository.js';
import { JobCountsRepository } from '../store/job-counts.repository.js';
import type { ChangedJob } from '../store/job-rows.js';
import { BULK_LIMIT } from '../store/job-rules.js';
import { JobTimersRepository } from '../store/job-timers.repository.js';
import { SchedulerSettings } from '../settings.js';
import { JobChanges } from '../shared/job-changes.js';
import { WorkerKeys } from '../workers/worker-keys.js';
import { WorkerLiveness } from '../workers/worker-liveness.service.js';
import { WorkerRelay } from '../workers/worker-relay.js';
import { WorkersRepository } from '../store/workers.repository.js';
import { Leadership, leaseTtl } from './leadership.js';

const CLEANUP_EVERY_MS = 60_000;
/** External workers silent this long are forgotten (they stop counting as unhealthy in /health). */
const FORGET_EXTERNAL_AFTER_MS = 5 * 60_000;
/** A stopped worker's process polls for at most one long poll (30 s) after its stop: 2 minutes of silence is final. */
const FORGET_STOPPED_AFTER_MS = 2 * 60_000;

/**
 * The durable timers. Deadlines are columns (`timeoutAt`, `expiresAt`, `resultsExpireAt`,
 * `lastSeenAt`), not in-memory timers, so they survive restarts and fail-over: every tick applies
 * whatever is due with conditional statements. One replica sweeps at a time (lease), and the
 * statements would still be correct on several.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private lastCleanup = 0;
  /**
   * When this replica last could not hear workers: a sweep that failed (its database was
   * unreachable, so their calls could not be recorded either), its bus down, or no queue-api
   * relaying their calls.
   */
  private deafAt = new Date(0);

  constructor(
    private readonly jobs: JobTimersRepository,
    private readonly counts: JobCountsRepository,
    private readonly workers: WorkersRepository,
    private readonly endpoints: EndpointsRepository,
    private readonly liveness: WorkerLiveness,
    private readonly relay: WorkerRelay,
    private readonly keys: WorkerKeys,
    private readonly leadership: Leadership,
    private readonly changes: JobChanges,
    private readonly settings: SchedulerSettings,
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.leadership.resign();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.settings.sweepIntervalMs);
    this.timer.unref();
  }

  /** Applies every deadline that has passed by `now`. */
  async tick(now = new Date()): Promise<void> {
    try {
      if (
        !(await this.leadership.isLeader(
          leaseTtl(this.settings),
          Math.min(1000, this.settings.sweepIntervalMs),
        ))
      )
        return;
      // Timeouts and TTL first, so a lost worker's jobs past their deadline end rather than requeue.
      await this.drain(() => this.jobs.timeOut(now), 'job timed out');
      await this.drain(() => this.jobs.expire(now), 'job ttl elapsed: deleted');
      while ((await this.jobs.expireResults(now)) >= BULK_LIMIT) {
        /* next batch */
      }
      // After the TTL sweep: the tombstones it made are among the changes folded.
      while ((await this.counts.fold()) >= BULK_LIMIT) {
        /* next batch */
      }
      if (!this.bus.isReady() || !this.relay.isRelaying()) this.deafAt = new Date();
      const lost = await this.workers.sweepSilent(
        now,
        this.settings.workerStartTimeoutMs,
        this.listeningSince(),
      );
      if (lost.length) await this.liveness.lost(lost, now, 'worker lost: it missed its pings');
      if (now.getTime() - this.lastCleanup >= CLEANUP_EVERY_MS) {
        this.lastCleanup = now.getTime();
        await this.jobs.cleanup(now);
        await this.counts.forgetGoneEndpoints();
        await this.workers.forgetStaleExternal(now, FORGET_EXTERNAL_AFTER_MS);
        await this.workers.forgetStopped(now, FORGET_STOPPED_AFTER_MS, {
          ms: this.settings.workerHistoryMs,
          max: this.settings.workerHistoryMax,
        });
        await this.endpoints.forgetProcessedEvents(new Date(now.getTime() - 86_400_000));
        await this.keys.reconcile(now);
      }
    } catch (err) {
      this.deafAt = new Date();
      if (!this.stopped)
        this.logger.warn({ err: String(err) }, 'scheduler: timer sweep failed; retrying next tick');
    }
  }

  /**
   * Since when this replica has heard workers without a break: since it leads (a scheduler that
   * was down, or another replica's, heard nobody meanwhile) and since it was last deaf.
   */
  private listeningSince(): Date {
    const leading = this.leadership.leadingSince ?? new Date();
    return leading > this.deafAt ? leading : this.deafAt;
  }

  /** Runs a batch statement until it has nothing left, announcing what changed. */
  private async drain(step: () => Promise<ChangedJob[]>, message: string): Promise<void> {
    for (;;) {
      const changed = await step();
      if (changed.length) {
        this.logger.info(
          { jobs: changed.map((j) => j.id).slice(0, 20), count: changed.length },
          message,
        );
      }
      if (changed.length < BULK_LIMIT) return;
    }
  }
}
