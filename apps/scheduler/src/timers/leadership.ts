import { Inject, Injectable } from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { randomUUID } from 'node:crypto';
import type { SchedulerSettings } from '../settings.js';
import { LeaseRepository } from '../store/lease.repository.js';

const LEASE = 'scheduler-loops';

/**
 * One scheduler replica at a time runs the background loops (timers, autoscaler): a lease row
 * renewed on every tick, taken over by another replica when it is not renewed for `ttlMs`.
 * The timer statements are safe to run on several replicas at once anyway (each row changes once);
 * the lease saves the duplicate work and, for the autoscaler, duplicate decisions.
 */
@Injectable()
export class Leadership {
  readonly holder = `scheduler-${randomUUID()}`;
  private leading = false;
  /** Since when this replica has led without a break (undefined: it does not lead). */
  private since?: Date;
  private checkedAt = 0;

  constructor(
    private readonly leases: LeaseRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** True when this replica leads; renews the lease at most every `renewMs`. */
  async isLeader(ttlMs: number, renewMs: number): Promise<boolean> {
    const now = Date.now();
    if (now - this.checkedAt < renewMs) return this.leading;
    this.checkedAt = now;
    const leading = await this.leases
      .acquire(LEASE, this.holder, new Date(now), ttlMs)
      .catch((err: unknown) => {
        this.logger.warn({ err: String(err) }, 'scheduler: could not renew the loop lease');
        return false;
      });
    if (leading !== this.leading)
      this.logger.info(
        { holder: this.holder },
        leading
          ? 'scheduler: this replica now runs the timers and the autoscaler'
          : 'scheduler: another replica runs the timers and the autoscaler',
      );
    if (leading && !this.leading) this.since = new Date(now);
    if (!leading) this.since = undefined;
    this.leading = leading;
    return leading;
  }

  /** When this replica last started to lead (undefined while it does not). */
  get leadingSince(): Date | undefined {
    return this.since;
  }

  async resign(): Promise<void> {
    if (this.leading) await this.leases.release(LEASE, this.holder).catch(() => {});
    this.leading = false;
    this.since = undefined;
  }
}

/** Another replica takes over the loops after this long without renewal. */
export function leaseTtl(settings: SchedulerSettings): number {
  return Math.max(5000, 5 * Math.max(settings.sweepIntervalMs, settings.autoscaleIntervalMs));
}
