import { RATE_LIMIT_WINDOW_MS } from '@runplane/contracts';
import { GroupCommit } from '@runplane/database';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { PrismaClient } from '../generated/prisma/client.js';

/** Requests counted in the current fixed window of a key, and when that window ends. */
export interface WindowCount {
  count: number;
  msBeforeReset: number;
}

/** Counts requests per key in fixed 10-second windows; the caller decides the limit. */
export interface RateCounter {
  hit(key: string): Promise<WindowCount>;
}

/**
 * One process (standalone): exact, no I/O. rate-limiter-flexible counts; its own point budget is
 * effectively unlimited, since the limit grows with the endpoint's running workers.
 */
export class MemoryRateCounter implements RateCounter {
  private readonly limiter = new RateLimiterMemory({
    points: Number.MAX_SAFE_INTEGER,
    duration: RATE_LIMIT_WINDOW_MS / 1000,
    keyPrefix: 'q',
  });

  async hit(key: string): Promise<WindowCount> {
    const res = await this.limiter.consume(key, 1);
    return { count: res.consumedPoints, msBeforeReset: res.msBeforeNext };
  }
}

/** Expired windows are deleted this often (by whichever replica counts first after it). */
const CLEANUP_EVERY_MS = 5 * 60_000;

/**
 * Several queue-api replicas (cluster mode): every replica counts in the same rows of queue-api's
 * PostgreSQL (table `RateLimit`, the row layout and upsert of rate-limiter-flexible's Postgres
 * store). The hits of concurrent requests are group-committed: one atomic `INSERT … ON CONFLICT
 * DO UPDATE … RETURNING` adds up a whole batch per key, and each request gets its own position in
 * the window's count, so the limit stays exact across replicas. If the database does not answer,
 * the hit is counted in memory instead: limits then hold per replica rather than failing requests.
 */
export class PostgresRateCounter implements RateCounter {
  private readonly hits: GroupCommit<string, WindowCount>;
  private readonly insurance = new MemoryRateCounter();
  private readonly table: string;
  private lastCleanup = Date.now();

  constructor(
    private readonly db: PrismaClient,
    schema: string,
  ) {
    this.table = `"${schema.replace(/"/g, '""')}"."RateLimit"`;
    this.hits = new GroupCommit((keys) => this.hitMany(keys));
  }

  async hit(key: string): Promise<WindowCount> {
    try {
      return await this.hits.call(key);
    } catch {
      return this.insurance.hit(key);
    }
  }

  private async hitMany(keys: string[]): Promise<WindowCount[]> {
    const perKey = new Map<string, number>();
    for (const key of keys) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    const now = Date.now();
    const rows = await this.db.$queryRawUnsafe<
      Array<{ key: string; points: number; expire: bigint | number }>
    >(
      `
      INSERT INTO ${this.table} AS r (key, points, expire)
      SELECT k, n, $3::bigint FROM unnest($1::text[], $2::int[]) AS u(k, n)
      ON CONFLICT (key) DO UPDATE SET
        points = CASE WHEN r.expire <= $4::bigint OR r.expire IS NULL THEN EXCLUDED.points ELSE r.points + EXCLUDED.points END,
        expire = CASE WHEN r.expire <= $4::bigint OR r.expire IS NULL THEN EXCLUDED.expire ELSE r.expire END
      RETURNING key, points, expire`,
      [...perKey.keys()].map(stored),
      [...perKey.values()],
      now + RATE_LIMIT_WINDOW_MS,
      now,
    );
    if (now - this.lastCleanup > CLEANUP_EVERY_MS) {
      this.lastCleanup = now;
      void this.db
        .$executeRawUnsafe(
          `DELETE FROM ${this.table} WHERE expire < $1::bigint`,
          now - RATE_LIMIT_WINDOW_MS,
        )
        .catch(() => {});
    }
    // Measured from the answer, not from `now`: a window another replica opened while this
    // statement waited for its row ends up to that wait later than `now` + the window.
    const answeredAt = Date.now();
    const counted = new Map(
      rows.map((r) => [
        r.key,
        { points: r.points, msBeforeReset: Math.max(0, Number(r.expire) - answeredAt) },
      ]),
    );
    // The batch's hits of one key took the last `n` places of its count, in call order.
    const place = new Map<string, number>();
    return keys.map((key) => {
      const row = counted.get(stored(key));
      if (!row) throw new Error(`rate limit row of ${key} not returned`);
      const before = place.get(key) ?? row.points - perKey.get(key)!;
      place.set(key, before + 1);
      return { count: before + 1, msBeforeReset: row.msBeforeReset };
    });
  }
}

/** The stored key (rate-limiter-flexible's `keyPrefix:key`, so rows written by either agree). */
const stored = (key: string) => `q:${key}`;
