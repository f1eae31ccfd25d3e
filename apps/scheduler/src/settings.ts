import { Injectable } from '@nestjs/common';
import { DEFAULT_PING_INTERVAL_MS } from '@runplane/contracts';
import { environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';
import { DEFAULT_START_BACKOFF_MS, startBackoffMs } from './store/worker-rules.js';

/**
 * The scheduler's own tuning (docs/configuration.md). Kept here rather than in RunplaneConfig
 * because no other service reads them; the defaults suit production, tests shorten them.
 */
@Injectable()
export class SchedulerSettings {
  /** RUNPOD_PING_INTERVAL given to workers; silence for 3 intervals makes a worker unhealthy. */
  readonly pingIntervalMs: number;
  /** How often the durable timers (timeouts, ttl, retention, worker liveness) are checked. */
  readonly sweepIntervalMs: number;
  /** How often the autoscaler compares every endpoint's workers with its needs. */
  readonly autoscaleIntervalMs: number;
  /** How long an endpoint the autoscaler found settled (nothing to start, see AutoscalerService) skips the ticks new jobs would run. */
  readonly autoscaleSettledMs: number;
  /** A managed worker that has not called in by then counts as failed to start. */
  readonly workerStartTimeoutMs: number;
  /** RUNPLANE_WORKER_START_BACKOFF_MS: the wait after a failed start, doubled for each next one. */
  readonly workerStartBackoffMs: number;
  /** Long polls re-read the database at least this often, in case a wake-up signal was lost. */
  readonly longPollRecheckMs: number;
  /**
   * RUNPLANE_JOB_MAX_ATTEMPTS: how many times a job may be taken by a worker that is then lost
   * while running it (missed pings, unhealthy, exited, stopped, never reached); at that loss it
   * ends FAILED instead of going back to the queue.
   */
  readonly jobMaxAttempts: number;
  /** RUNPLANE_WORKER_HISTORY_MS: how long ended workers stay listed by `/v1/endpoints/{id}/workers` (1 h). */
  readonly workerHistoryMs: number;
  /** RUNPLANE_WORKER_HISTORY_MAX: at most this many ended workers are kept per endpoint (20). */
  readonly workerHistoryMax: number;
  /** Where workers reach queue-api (RUNPLANE_PUBLIC_URL); derived from the listening port when unset. */
  readonly publicUrl?: string;

  constructor(config: RunplaneConfig) {
    const env = environmentOf(config);
    this.pingIntervalMs = intSetting(
      env,
      'RUNPLANE_WORKER_PING_INTERVAL_MS',
      DEFAULT_PING_INTERVAL_MS,
      // Two intervals must exceed queue-api's relay heartbeat window (RELAY_SILENT_AFTER_MS).
      1000,
      600_000,
    );
    this.sweepIntervalMs = intSetting(env, 'RUNPLANE_SCHEDULER_SWEEP_MS', 500, 20, 60_000);
    this.autoscaleIntervalMs = intSetting(env, 'RUNPLANE_AUTOSCALE_INTERVAL_MS', 1000, 20, 60_000);
    this.autoscaleSettledMs = intSetting(env, 'RUNPLANE_AUTOSCALE_SETTLED_MS', 5000, 0, 600_000);
    this.workerStartTimeoutMs = intSetting(
      env,
      'RUNPLANE_WORKER_START_TIMEOUT_MS',
      120_000,
      1000,
      3_600_000,
    );
    this.workerStartBackoffMs = intSetting(
      env,
      'RUNPLANE_WORKER_START_BACKOFF_MS',
      DEFAULT_START_BACKOFF_MS,
      100,
      300_000,
    );
    this.longPollRecheckMs = intSetting(env, 'RUNPLANE_LONG_POLL_RECHECK_MS', 2000, 50, 60_000);
    this.jobMaxAttempts = intSetting(env, 'RUNPLANE_JOB_MAX_ATTEMPTS', 3, 1, 100);
    this.workerHistoryMs = intSetting(
      env,
      'RUNPLANE_WORKER_HISTORY_MS',
      3_600_000,
      60_000,
      86_400_000,
    );
    this.workerHistoryMax = intSetting(env, 'RUNPLANE_WORKER_HISTORY_MAX', 20, 1, 1000);
    this.publicUrl = config.RUNPLANE_PUBLIC_URL?.replace(/\/+$/, '') || undefined;
  }

  /** How long an endpoint waits to start a worker again after `failures` failed starts in a row. */
  readonly startBackoff = (failures: number): number =>
    startBackoffMs(failures, this.workerStartBackoffMs);
}
