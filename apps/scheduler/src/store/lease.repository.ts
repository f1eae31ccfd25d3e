import { Injectable } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';

const ts = (d: Date) => d.toISOString();

/** Data access of leases (leadership among scheduler replicas). */
@Injectable()
export class LeaseRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /** Takes or renews the lease for `ttlMs`; true when `holder` holds it afterwards. */
  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const rows = await this.db.$queryRawUnsafe<Array<{ holder: string }>>(
      `
      INSERT INTO ${this.t.lease} (name, holder, "expiresAt") VALUES ($1, $2, $4::timestamp(3))
      ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, "expiresAt" = EXCLUDED."expiresAt"
        WHERE ${this.t.lease}.holder = EXCLUDED.holder OR ${this.t.lease}."expiresAt" <= $3::timestamp(3)
      RETURNING holder`,
      name,
      holder,
      ts(now),
      ts(new Date(now.getTime() + ttlMs)),
    );
    return rows.length > 0 && rows[0].holder === holder;
  }

  /** Gives the lease up (graceful shutdown) so another replica takes over at once. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.lease.deleteMany({ where: { name, holder } });
  }
}
