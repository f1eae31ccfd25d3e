import { Injectable } from '@nestjs/common';
import {
  QUEUE_RATE_LIMITS,
  RATE_LIMIT_WINDOW_MS,
  type LimitedQueueOperation,
  type Principal,
} from '@runplane/contracts';
import { DatabaseTargets } from '@runplane/database';
import { PrismaClient } from '../generated/prisma/client.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { LimitSettings } from './limit-settings.js';
import { MemoryRateCounter, PostgresRateCounter, type RateCounter } from './rate-counter.js';
import { ReplicaRegistry } from './replica-registry.js';
import { WorkerCounts } from './worker-counts.js';

export type Admission =
  | { admitted: true; release: () => void }
  | { admitted: false; message: string; retryAfterSeconds: number };

/**
 * RunPod's limits per endpoint and operation (docs/limits.md): a rate limit per 10-second window
 * and a limit of requests in flight, each effectively max(base, running workers × per-worker
 * allowance). Counted per user and endpoint, so another user's traffic on an endpoint id (which
 * only ever gets 404) cannot use up the owner's budget.
 */
@Injectable()
export class QueueLimits {
  private readonly counter: RateCounter;
  private readonly concurrency = new ConcurrencyLimiter();

  constructor(
    db: PrismaClient,
    targets: DatabaseTargets,
    private readonly settings: LimitSettings,
    private readonly workers: WorkerCounts,
    private readonly replicas: ReplicaRegistry,
  ) {
    const target = targets.targetFor('queue-api');
    // One process owns the embedded database, so memory is exact there; replicas share Postgres.
    this.counter =
      target.kind === 'embedded'
        ? new MemoryRateCounter()
        : new PostgresRateCounter(db, target.schema);
  }

  async admit(
    principal: Principal,
    endpointId: string,
    operation: LimitedQueueOperation,
  ): Promise<Admission> {
    const base = QUEUE_RATE_LIMITS[operation];
    const key = `${principal.userId}/${endpointId}/${operation}`;
    const running = () => this.workers.running(principal.userId, endpointId);

    let release = () => {};
    if (base.concurrent !== null) {
      // This replica's share; the workers are only asked about when the base share is used up.
      const share = (limit: number) => Math.max(1, Math.ceil(limit / this.replicas.count));
      let slot = this.concurrency.tryAcquire(key, share(base.concurrent));
      if (!slot)
        slot = this.concurrency.tryAcquire(
          key,
          share(
            Math.max(
              base.concurrent,
              (await running()) * this.settings.concurrentRequestsPerWorker,
            ),
          ),
        );
      if (!slot) {
        return {
          admitted: false,
          retryAfterSeconds: 1,
          message: `too many concurrent ${operation} requests on endpoint ${endpointId} (limit ${base.concurrent} in flight, more with running workers); retry with backoff`,
        };
      }
      release = slot;
    }

    try {
      const { count, msBeforeReset } = await this.counter.hit(key);
      if (count > base.per10s) {
        const limit = Math.max(base.per10s, (await running()) * this.settings.requestsPerWorker);
        if (count > limit) {
          release();
          const retryAfterSeconds = Math.min(
            RATE_LIMIT_WINDOW_MS / 1000,
            Math.max(1, Math.ceil(msBeforeReset / 1000)),
          );
          return {
            admitted: false,
            retryAfterSeconds,
            message: `rate limit of ${operation} on endpoint ${endpointId} exceeded (${limit} requests per ${RATE_LIMIT_WINDOW_MS / 1000} s); retry after ${retryAfterSeconds} s`,
          };
        }
      }
    } catch (err) {
      release();
      throw err;
    }
    return { admitted: true, release };
  }
}
