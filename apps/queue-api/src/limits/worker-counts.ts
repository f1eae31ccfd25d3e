import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { SchedulerRpc } from '@runplane/contracts';
import { LimitSettings } from './limit-settings.js';

/**
 * Running workers of an endpoint (idle or busy, i.e. up), the input of the effective limits. Asked
 * from the scheduler only when a request would exceed the base limit, and cached briefly.
 */
@Injectable()
export class WorkerCounts {
  private readonly cache = new Map<string, { workers: number; expires: number }>();
  private readonly pending = new Map<string, Promise<number>>();

  constructor(
    private readonly bus: Bus,
    private readonly settings: LimitSettings,
  ) {}

  running(ownerId: string, endpointId: string): Promise<number> {
    const key = `${ownerId}/${endpointId}`;
    const hit = this.cache.get(key);
    if (hit && hit.expires > Date.now()) return Promise.resolve(hit.workers);
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.fetch(ownerId, endpointId)
        .then((workers) => {
          if (this.cache.size > 10_000) this.cache.clear();
          this.cache.set(key, { workers, expires: Date.now() + this.settings.workerCountTtlMs });
          return workers;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  private async fetch(ownerId: string, endpointId: string): Promise<number> {
    try {
      const { workers } = await this.bus.request(
        SchedulerRpc.health,
        { ownerId, endpointId },
        { timeoutMs: 2000 },
      );
      return workers.idle + workers.running;
    } catch {
      // Unknown endpoint (the route answers 404 itself) or no answer: the base limit applies.
      return 0;
    }
  }
}
