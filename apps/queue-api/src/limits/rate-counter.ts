import { RATE_LIMIT_WINDOW_MS } from '@runplane/contracts';
import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { PrismaClient } from '../generated/prisma/client.js';

/** Requests counted in the current fixed window of a key, and when that window ends. */
export interface WindowCount {
  count: number;
  msBeforeReset: number;
}

/**
 * Fixed 10-second windows per key, counted by rate-limiter-flexible. The limit itself is decided by
 * the caller (it grows with the endpoint's running workers), so the limiter only counts: its own
 * point budget is effectively unlimited.
 */
export abstract class RateCounter {
  protected abstract readonly limiter: RateLimiterAbstract;

  async hit(key: string): Promise<WindowCount> {
    const res = await this.limiter.consume(key, 1);
    return { count: res.consumedPoints, msBeforeReset: res.msBeforeNext };
  }
}

const COUNT_ONLY = { points: Number.MAX_SAFE_INTEGER, duration: RATE_LIMIT_WINDOW_MS / 1000 };

/** One process (standalone): exact, no I/O. */
export class MemoryRateCounter extends RateCounter {
  protected readonly limiter = new RateLimiterMemory({ ...COUNT_ONLY, keyPrefix: 'q' });
}

/**
 * Several queue-api replicas (cluster mode): every replica counts in the same rows of queue-api's
 * PostgreSQL, one atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` per request. If the database
 * does not answer, the insurance limiter counts in memory, so limits degrade to per-replica
 * instead of failing requests.
 */
export class PostgresRateCounter extends RateCounter {
  protected readonly limiter: RateLimiterPostgres;

  constructor(db: PrismaClient, schema: string) {
    super();
    this.limiter = new RateLimiterPostgres({
      ...COUNT_ONLY,
      keyPrefix: 'q',
      storeClient: prismaQueryClient(db),
      storeType: 'client',
      schemaName: schema,
      tableName: 'RateLimit',
      tableCreated: true, // by queue-api's migration
      insuranceLimiter: new RateLimiterMemory({ ...COUNT_ONLY, keyPrefix: 'q' }),
    });
  }
}

/**
 * The `pg`-style `query({text, values})` the Postgres store calls, run through queue-api's own
 * Prisma client (its connection pool and tracing). `expire` is a bigint column: returned as a
 * number, as `pg` would after the store's arithmetic expects.
 */
function prismaQueryClient(db: PrismaClient) {
  return {
    async query(q: { text: string; values?: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }> {
      const rows = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(q.text, ...(q.values ?? []));
      return { rows: rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))) };
    },
  };
}
