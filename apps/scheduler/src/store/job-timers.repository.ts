import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerSettings } from '../settings.js';
import { SchedulerTables } from './scheduler-tables.js';
import { JobDeletions } from './job-deletions.js';
import { JobEffects } from './job-effects.js';
import { at, type ChangedJob, type Requeued } from './job-rows.js';
import { BULK_LIMIT, BULK_TX, heldLiveSql, RESULT_RETENTION_SQL } from './job-rules.js';

/**
 * Transitions that time decides (run by the sweeper) or a lost worker causes: durable timers are
 * columns (`timeoutAt`, `expiresAt`, `resultsExpireAt`), applied by conditional statements, so a
 * restart or a fail-over loses none. Each changes at most `BULK_LIMIT` jobs per call.
 */
@Injectable()
export class JobTimersRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
    private readonly settings: SchedulerSettings,
    private readonly deletions: JobDeletions,
  ) {}

  /** IN_PROGRESS past its execution timeout → TIMED_OUT, worker told to stop. */
  timeOut(now: Date): Promise<ChangedJob[]> {
    return this.effects.finalizeWhere(
      Prisma.sql`status = 'IN_PROGRESS' AND "timeoutAt" <= ${at(now)}::timestamp(3) AND "deletedAt" IS NULL`,
      'TIMED_OUT',
      'timed-out',
      now,
    );
  }

  /**
   * TTL elapsed → the job is deleted: a tombstone (404 everywhere) whose worker is told to stop and
   * whose late result is dropped quietly.
   */
  async expire(now: Date): Promise<ChangedJob[]> {
    const { job, stop, event } = this.t.sql;
    const expired = await this.db.$queryRaw<ChangedJob[]>(Prisma.sql`
      WITH expired AS (
        UPDATE ${job} SET "deletedAt" = ${at(now)}::timestamp(3), output = NULL, error = NULL, "timeoutAt" = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${job} WHERE "expiresAt" <= ${at(now)}::timestamp(3) AND "deletedAt" IS NULL
                     LIMIT ${BULK_LIMIT} FOR UPDATE SKIP LOCKED))
        RETURNING id, "endpointId", "workerId", status
      ), stops AS (
        INSERT INTO ${stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, "workerId", "endpointId", 'expired', ${at(now)}::timestamp(3) FROM expired WHERE status = 'IN_PROGRESS' AND "workerId" IS NOT NULL
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId", detail)
        SELECT x.id, ${at(now)}::timestamp(3), e.type, e."workerId", e.detail
        FROM expired x, LATERAL (VALUES (0, 'STOP_SENT', x."workerId", 'ttl elapsed'), (1, 'EXPIRED', NULL, NULL)) AS e(n, type, "workerId", detail)
        WHERE e.n = 1 OR (x.status = 'IN_PROGRESS' AND x."workerId" IS NOT NULL)
        ORDER BY x.id, e.n
      )
      SELECT id, "endpointId", CASE WHEN status = 'IN_PROGRESS' THEN "workerId" END AS "workerId" FROM expired`);
    this.effects.ended(expired);
    return expired;
  }

  /**
   * Result retention elapsed → output, error and stream removed. `resultsExpireAt` becomes NULL:
   * on a final job that means "results expired" (retry refused) and keeps this sweep's index
   * range small. Returns how many jobs it changed.
   */
  async expireResults(now: Date): Promise<number> {
    const { job, chunk } = this.t.sql;
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      WITH dropped AS (
        UPDATE ${job} SET output = NULL, error = NULL, "resultsExpireAt" = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${job} WHERE "resultsExpireAt" <= ${at(now)}::timestamp(3)
                     LIMIT ${BULK_LIMIT} FOR UPDATE SKIP LOCKED))
        RETURNING id
      ), chunks AS (DELETE FROM ${chunk} c USING dropped d WHERE c."jobId" = d.id)
      SELECT id FROM dropped`);
    return rows.length;
  }

  /**
   * The worker is gone (silent, unhealthy, exited, stopped): its running jobs go back to the queue
   * with `retries` + 1, unless their TTL or execution timeout has passed (the sweeper ends those).
   * A job that has been taken RUNPLANE_JOB_MAX_ATTEMPTS times ends FAILED instead, saying so (and
   * announces its webhook). The worker gets a stop for each, should it come back. `reason` says
   * why (recorded with the REQUEUED or FAILED event).
   *
   * With `unreported`, only the jobs it was given before `startedBefore` and does not report
   * having (its ping lists its jobs in progress): the answer that gave it those never arrived.
   */
  async requeueFromWorker(
    endpointId: string,
    workerId: string,
    now: Date,
    reason: string,
    unreported?: { reported: string[]; startedBefore: Date },
  ): Promise<Requeued> {
    const max = this.settings.jobMaxAttempts;
    const { job, stop, event, jobStatus } = this.t.sql;
    const onlyUnreported = unreported
      ? Prisma.sql`AND j."startedAt" < ${at(unreported.startedBefore)}::timestamp(3) AND NOT (j.id = ANY(${unreported.reported}::text[]))`
      : Prisma.empty;
    const exhausted = Prisma.sql`j.attempts >= ${max}`;
    const { rows, announced } = await this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        Array<ChangedJob & { failed: boolean; hooked: boolean; startedAt: Date | null }>
      >(Prisma.sql`
      WITH lost AS (
        UPDATE ${job} j SET
          status = (CASE WHEN ${exhausted} THEN 'FAILED' ELSE 'IN_QUEUE' END)::${jobStatus},
          "workerId" = CASE WHEN ${exhausted} THEN j."workerId" END,
          "startedAt" = CASE WHEN ${exhausted} THEN j."startedAt" END,
          "queuedAt" = CASE WHEN ${exhausted} THEN j."queuedAt" ELSE ${at(now)}::timestamp(3) END,
          "completedAt" = CASE WHEN ${exhausted} THEN ${at(now)}::timestamp(3) END,
          "resultsExpireAt" = CASE WHEN ${exhausted} THEN ${at(now)}::timestamp(3) + ${RESULT_RETENTION_SQL} END,
          error = CASE WHEN ${exhausted} THEN format('the job''s worker was lost %s times while running it (RUNPLANE_JOB_MAX_ATTEMPTS=%s); last: %s',
            j.attempts, ${max}::int, ${reason}::text) END,
          retries = j.retries + CASE WHEN ${exhausted} THEN 0 ELSE 1 END,
          "timeoutAt" = NULL, output = NULL
        WHERE ${heldLiveSql('j', endpointId, workerId, now)} AND j."timeoutAt" > ${at(now)}::timestamp(3)
          ${onlyUnreported}
        RETURNING j.id, j."endpointId", j.status = 'FAILED' AS failed, j.webhook IS NOT NULL AS hooked, j."startedAt", j.error
      ), stops AS (
        INSERT INTO ${stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, ${workerId}, "endpointId", 'requeued', ${at(now)}::timestamp(3) FROM lost
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId", detail)
        SELECT id, ${at(now)}::timestamp(3), CASE WHEN failed THEN 'FAILED' ELSE 'REQUEUED' END, ${workerId},
          CASE WHEN failed THEN error ELSE ${reason}::text END FROM lost
      )
      SELECT id, "endpointId", NULL AS "workerId", failed, hooked, "startedAt" FROM lost`);
      const hooked = rows.filter((r) => r.failed && r.hooked).map((r) => r.id);
      return { rows, announced: await this.effects.announceIds(tx, hooked, now) };
    }, BULK_TX);
    const failed = rows.filter((r) => r.failed);
    this.effects.finished('FAILED', failed, now, announced);
    const changed = ({ id, endpointId: e }: ChangedJob) => ({ id, endpointId: e, workerId: null });
    const result = {
      requeued: rows.filter((r) => !r.failed).map(changed),
      failed: failed.map(changed),
    };
    this.effects.lost(result.requeued, result.failed);
    return result;
  }

  /** Forgets tombstones and delivered stops after an hour, undelivered stops after a day. */
  async cleanup(now: Date): Promise<void> {
    const hourAgo = new Date(now.getTime() - 3600_000);
    await this.deletions.deleteWhere(Prisma.sql`"deletedAt" < ${at(hourAgo)}::timestamp(3)`);
    await this.db.jobStop.deleteMany({
      where: {
        OR: [
          { deliveredAt: { lt: hourAgo } },
          { createdAt: { lt: new Date(now.getTime() - 86_400_000) } },
        ],
      },
    });
  }
}
