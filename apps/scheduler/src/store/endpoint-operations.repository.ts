import { Injectable } from '@nestjs/common';
import type { DurationPercentiles, EndpointMetrics } from '@runplane/contracts';
import { Prisma, PrismaClient, type Worker as WorkerRow } from '../generated/prisma/client.js';
import { aliveSql } from './job-rules.js';
import { SchedulerTables } from './scheduler-tables.js';

const ts = (d: Date) => d.toISOString();
/** A duration between two timestamp columns in whole ms. */
const ms = (from: string, to: string) =>
  `GREATEST(0, ROUND(EXTRACT(EPOCH FROM (${to} - ${from})) * 1000))::int`;

/**
 * Read-only queries for operating endpoints (their workers, why jobs wait, metrics) over the
 * scheduler's jobs, workers and cold starts.
 */
@Injectable()
export class EndpointOperationsRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /** Live queued jobs (any priority) per endpoint, for those with any. */
  async queued(endpointIds: string[], now: Date): Promise<Map<string, number>> {
    if (!endpointIds.length) return new Map();
    const rows = await this.db.$queryRaw<Array<{ endpointId: string; n: number }>>(Prisma.sql`
      SELECT "endpointId", count(*)::int AS n FROM ${this.t.sql.job}
      WHERE "endpointId" = ANY(${endpointIds}::text[]) AND status = 'IN_QUEUE' AND ${aliveSql(now)}
      GROUP BY "endpointId"`);
    return new Map(rows.map((r) => [r.endpointId, r.n]));
  }

  /** Workers of the endpoints, ended ones included. */
  workersOf(endpointIds: string[]): Promise<WorkerRow[]> {
    return this.db.worker.findMany({
      where: { endpointId: { in: endpointIds } },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    });
  }

  /** `endpointId \0 workerId` of the workers of these endpoints that hold a job. */
  async busy(endpointIds: string[]): Promise<Set<string>> {
    const rows = await this.db.job.findMany({
      where: {
        endpointId: { in: endpointIds },
        status: 'IN_PROGRESS',
        deletedAt: null,
        workerId: { not: null },
      },
      select: { endpointId: true, workerId: true },
      distinct: ['endpointId', 'workerId'],
    });
    return new Set(rows.map((r) => `${r.endpointId}\u0000${r.workerId}`));
  }

  /** Ids of the jobs each worker of the endpoint holds. */
  async heldJobs(endpointId: string): Promise<Map<string, string[]>> {
    const rows = await this.db.job.findMany({
      where: { endpointId, status: 'IN_PROGRESS', deletedAt: null, workerId: { not: null } },
      select: { id: true, workerId: true },
      orderBy: { startedAt: 'asc' },
    });
    const held = new Map<string, string[]>();
    for (const r of rows) held.set(r.workerId!, [...(held.get(r.workerId!) ?? []), r.id]);
    return held;
  }

  /** Counts and duration percentiles of the endpoint's jobs and cold starts between `from` and `to`. */
  async metrics(
    endpointId: string,
    from: Date,
    to: Date,
  ): Promise<Omit<EndpointMetrics, 'window' | 'from' | 'to'>> {
    const window = [endpointId, ts(from), ts(to)];
    const [[jobs], delayTime, executionTime, coldStart] = await Promise.all([
      this.db.$queryRawUnsafe<Array<EndpointMetrics['jobs']>>(
        `
        SELECT (count(*) FILTER (WHERE status = 'COMPLETED'))::int AS completed,
          (count(*) FILTER (WHERE status = 'FAILED'))::int AS failed,
          (count(*) FILTER (WHERE status = 'TIMED_OUT'))::int AS "timedOut",
          (count(*) FILTER (WHERE retries > 0))::int AS retried
        FROM ${this.t.job}
        WHERE "endpointId" = $1 AND status IN ('COMPLETED', 'FAILED', 'TIMED_OUT')
          AND "completedAt" >= $2::timestamp(3) AND "completedAt" <= $3::timestamp(3)`,
        ...window,
      ),
      this.percentiles(
        `SELECT ${ms('"createdAt"', '"startedAt"')} AS ms FROM ${this.t.job}
         WHERE "endpointId" = $1 AND "startedAt" >= $2::timestamp(3) AND "startedAt" <= $3::timestamp(3)`,
        window,
      ),
      this.percentiles(
        `SELECT ${ms('"startedAt"', '"completedAt"')} AS ms FROM ${this.t.job}
         WHERE "endpointId" = $1 AND status IN ('COMPLETED', 'FAILED', 'TIMED_OUT') AND "startedAt" IS NOT NULL
           AND "completedAt" >= $2::timestamp(3) AND "completedAt" <= $3::timestamp(3)`,
        window,
      ),
      this.percentiles(
        `SELECT ms FROM ${this.t.coldStart}
         WHERE "endpointId" = $1 AND at >= $2::timestamp(3) AND at <= $3::timestamp(3)`,
        window,
      ),
    ]);
    return { jobs, delayTime, executionTime, coldStart };
  }

  /** p70/p90/p98 (nearest rank) of the `ms` column of `sample`. */
  private async percentiles(sample: string, params: unknown[]): Promise<DurationPercentiles> {
    const [row] = await this.db.$queryRawUnsafe<Array<{ samples: number; p: number[] | null }>>(
      `SELECT count(*)::int AS samples,
         percentile_disc(ARRAY[0.7, 0.9, 0.98]) WITHIN GROUP (ORDER BY ms) AS p
       FROM (${sample}) s`,
      ...params,
    );
    const [p70, p90, p98] = row.p ?? [null, null, null];
    return { samples: row.samples, p70, p90, p98 };
  }
}
