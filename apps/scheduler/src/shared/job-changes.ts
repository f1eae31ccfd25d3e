import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerSignals } from '@runplane/contracts';
import { LOGGER, ReadinessService, type Logger } from '@runplane/platform';

/** `jobId` of a change that concerns the whole endpoint (purge, sweeps): wakes all its waiters. */
export const ANY_JOB = '*';

interface Waiter {
  endpointId: string;
  /** Only changes of this job wake it; undefined: any change on the endpoint (take, stop polls). */
  jobId?: string;
  wake: () => void;
}

/**
 * Wake-ups of long polls (await, stream, take, stop). Every change is announced here: it wakes
 * this replica's waiters at once and the other replicas' through `SchedulerSignals.jobChanged`.
 * A wake-up only means "look again": waiters re-read the database, which stays the truth, and
 * re-read it periodically anyway in case a signal was lost (signals are best effort).
 */
@Injectable()
export class JobChanges implements OnModuleDestroy {
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Set<(endpointId: string) => void>();
  private readonly wakeListeners = new Set<(endpointId: string, jobId: string) => void>();
  /** Count of wake-ups per endpoint: a poll that read the database before a change does not wait for the next one. */
  private readonly generations = new Map<string, number>();
  private closing = false;
  private drainWatch?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly readiness?: ReadinessService,
  ) {}

  /** True once the process shuts down: long polls answer with what they have. */
  get stopping(): boolean {
    return this.closing || (this.readiness?.isDraining ?? false);
  }

  /**
   * Announces changed jobs of an endpoint (ANY_JOB for many) locally and to other replicas.
   * `scaling`: the change may call for more or fewer workers (new or requeued jobs, endpoint
   * changes); progress and stream chunks are not, and would only make the autoscaler spin.
   */
  changed(endpointId: string, jobId: string = ANY_JOB, scaling = false): void {
    this.wake(endpointId, jobId);
    if (scaling) for (const listener of this.listeners) listener(endpointId);
    this.bus.signal(SchedulerSignals.jobChanged, { endpointId, jobId }).catch((err: unknown) => {
      // Best effort by design: other replicas re-check on their own within longPollRecheckMs.
      if (!this.stopping) this.logger.warn({ err: String(err), endpointId }, 'could not signal a job change');
    });
  }

  /** Wakes this replica's waiters for a change (from `changed` or from another replica's signal). */
  wake(endpointId: string, jobId: string): void {
    for (const listener of this.wakeListeners) listener(endpointId, jobId);
    if (this.generations.size > 100_000) this.generations.clear(); // bounded; a reset only costs a re-read
    this.generations.set(endpointId, (this.generations.get(endpointId) ?? 0) + 1);
    for (const w of this.waiters) {
      if (w.endpointId === endpointId && (w.jobId === undefined || jobId === ANY_JOB || w.jobId === jobId)) w.wake();
    }
  }

  /** Runs `listener` for every local change that affects scaling (the autoscaler reacts at once). */
  onChange(listener: (endpointId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `listener` for every change seen here, local or from another replica (caches drop entries). */
  onWake(listener: (endpointId: string, jobId: string) => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }

  /** Take before reading the database; pass to `wait` so a change in between is not missed. */
  mark(endpointId: string): number {
    return this.generations.get(endpointId) ?? 0;
  }

  /**
   * Resolves after a matching change, after `ms`, or when the process starts draining; at once if
   * the endpoint changed since `since` (a `mark` taken before the caller's last read).
   */
  wait(endpointId: string, jobId: string | undefined, ms: number, since?: number): Promise<void> {
    if (this.stopping || ms <= 0 || (since !== undefined && since !== this.mark(endpointId))) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        endpointId,
        jobId,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, ms);
      this.waiters.add(waiter);
      this.watchDraining();
    });
  }

  /**
   * Readiness turns "draining" before the HTTP server closes; held polls must answer then instead
   * of keeping the shutdown waiting for up to a minute.
   */
  private watchDraining(): void {
    if (this.drainWatch || !this.readiness) return;
    this.drainWatch = setInterval(() => {
      if (this.stopping) this.wakeAll();
      if (this.waiters.size === 0) {
        clearInterval(this.drainWatch);
        this.drainWatch = undefined;
      }
    }, 200);
    this.drainWatch.unref();
  }

  private wakeAll(): void {
    for (const w of [...this.waiters]) w.wake();
  }

  onModuleDestroy(): void {
    this.closing = true;
    this.wakeAll();
    if (this.drainWatch) clearInterval(this.drainWatch);
  }
}
