import { Injectable } from '@nestjs/common';
import { boolSetting, environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';

/** queue-api's limit settings (docs/limits.md, docs/configuration.md). */
@Injectable()
export class LimitSettings {
  /** Off only for benchmarks of the raw machinery; on in production. */
  readonly enabled: boolean;
  /** Requests per 10-second window each running worker adds (effective = max(base, workers × this)). */
  readonly requestsPerWorker: number;
  /** Requests in flight each running worker adds to the concurrency limits. */
  readonly concurrentRequestsPerWorker: number;
  /** How long a running-worker count is reused before the scheduler is asked again. */
  readonly workerCountTtlMs: number;

  constructor(config: RunplaneConfig) {
    const env = environmentOf(config);
    this.enabled = boolSetting(env, 'RUNPLANE_RATE_LIMITS', true);
    this.requestsPerWorker = intSetting(env, 'RUNPLANE_REQUESTS_PER_WORKER', 100, 0, 1_000_000);
    this.concurrentRequestsPerWorker = intSetting(
      env,
      'RUNPLANE_CONCURRENT_REQUESTS_PER_WORKER',
      20,
      0,
      100_000,
    );
    this.workerCountTtlMs = intSetting(env, 'RUNPLANE_WORKER_COUNT_TTL_MS', 2000, 100, 60_000);
  }
}
