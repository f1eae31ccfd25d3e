import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { at, type HealthCounts } from './job-rows.js';
import { aliveSql, BULK_LIMIT } from './job-rules.js';
import { SchedulerTables } from './scheduler-tables.js';

/**
 * `/health`'s job counts. Queued and running jobs are counted when asked (as many as wait or
 * run); completed, failed and retried ones grow with the retained results, so triggers on Job
 * record each change of them (EndpointJobCountChange, see its migration) and the sweeper folds
 * those into EndpointJobCount.
 */
@Injectable()
export class JobCountsRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /**
   * The endpoint's counts of alive jobs at `now`: the folded counts, plus the changes not folded
   * yet, less the jobs past their expiry that the sweeper has not made tombstones yet (read from
   * the expiry index of jobs that are not tombstones: only what expired since its last sweep).
   */
  async forHealth(endpointId: string, now: Date): Promise<HealthCounts> {
    const { job, jobCount, jobCountChange } = this.t.sql;
    const [counts] = await this.db.$queryRaw<HealthCounts[]>(Prisma.sql`
      SELECT (kept.completed - expired.completed)::int AS completed,
        (kept.failed - expired.failed)::int AS failed,
        active."inProgress", active."inQueue", (kept.retried - expired.retried)::int AS retried
      FROM (
        SELECT count(*) FILTER (WHERE status = 'IN_PROGRESS')::int AS "inProgress",
          count(*) FILTER (WHERE status = 'IN_QUEUE')::int AS "inQueue"
        FROM ${job} WHERE "endpointId" = ${endpointId} AND status IN ('IN_QUEUE', 'IN_PROGRESS')
          AND ${aliveSql(now)}
      ) active, (
        SELECT count(*) FILTER (WHERE status = 'COMPLETED') AS completed,
          count(*) FILTER (WHERE status = 'FAILED') AS failed,
          count(*) FILTER (WHERE retries > 0) AS retried
        FROM ${job} WHERE "expiresAt" <= ${at(now)}::timestamp(3) AND "deletedAt" IS NULL
          AND "endpointId" = ${endpointId}
      ) expired, (
        SELECT coalesce(sum(completed), 0) AS completed, coalesce(sum(failed), 0) AS failed,
          coalesce(sum(retried), 0) AS retried
        FROM (
          SELECT completed, failed, retried FROM ${jobCount} WHERE "endpointId" = ${endpointId}
          UNION ALL
          SELECT completed, failed, retried FROM ${jobCountChange} WHERE "endpointId" = ${endpointId}
        ) c
      ) kept`);
    return counts;
  }

  /**
   * Folds up to `BULK_LIMIT` recorded changes into the counts, in one statement: a change row is
   * deleted and added at once, and one a concurrent fold holds is skipped. Returns how many were
   * folded (callers repeat while a batch comes back full).
   */
  async fold(): Promise<number> {
    const { jobCount, jobCountChange } = this.t.sql;
    const [{ folded }] = await this.db.$queryRaw<Array<{ folded: number }>>(Prisma.sql`
      WITH moved AS (
        DELETE FROM ${jobCountChange} WHERE id = ANY(ARRAY(
          SELECT id FROM ${jobCountChange} ORDER BY id LIMIT ${BULK_LIMIT} FOR UPDATE SKIP LOCKED))
        RETURNING "endpointId", completed, failed, retried
      ), added AS (
        INSERT INTO ${jobCount} AS c ("endpointId", completed, failed, retried)
        SELECT "endpointId", sum(completed), sum(failed), sum(retried) FROM moved
        GROUP BY "endpointId" ORDER BY "endpointId"
        ON CONFLICT ("endpointId") DO UPDATE SET completed = c.completed + EXCLUDED.completed,
          failed = c.failed + EXCLUDED.failed, retried = c.retried + EXCLUDED.retried
      )
      SELECT count(*)::int AS folded FROM moved`);
    return folded;
  }

  /** Forgets the counts of deleted endpoints once none of their jobs counts any more. */
  async forgetGoneEndpoints(): Promise<void> {
    const { jobCount } = this.t.sql;
    await this.db.$executeRaw(Prisma.sql`
      DELETE FROM ${jobCount} c WHERE completed = 0 AND failed = 0 AND retried = 0
        AND NOT EXISTS (SELECT 1 FROM ${this.t.sql.endpoint} e WHERE e.id = c."endpointId")`);
  }
}
