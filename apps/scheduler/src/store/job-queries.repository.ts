import { Injectable } from '@nestjs/common';
import type { JobEvent, JobEventType, JobStatus } from '@runplane/contracts';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';
import { at, type QueueStats } from './job-rows.js';
import { aliveSql } from './job-rules.js';

/** A row of `/requests`. */
export interface ListedJob {
  id: string;
  status: JobStatus;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

/** Reads over many jobs: lists, counts, queue statistics, a job's history. */
@Injectable()
export class JobQueriesRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /**
   * Newest first; `after` is the last row of the previous page. The page is read per status from
   * the (endpointId, status, createdAt) index and merged: ordered by createdAt across all
   * statuses, that index alone made every page sort all of the endpoint's retained jobs.
   */
  list(
    endpointId: string,
    status: JobStatus | undefined,
    limit: number,
    after: { createdAt: Date; id: string } | undefined,
    now: Date,
  ): Promise<ListedJob[]> {
    const { job, jobStatus } = this.t.sql;
    const statuses = status
      ? Prisma.sql`unnest(ARRAY[${status}]::${jobStatus}[])`
      : Prisma.sql`unnest(enum_range(NULL::${jobStatus}))`;
    const before = after
      ? Prisma.sql`AND ("createdAt", id) < (${at(after.createdAt)}::timestamp(3), ${after.id})`
      : Prisma.empty;
    return this.db.$queryRaw<ListedJob[]>(Prisma.sql`
      SELECT page.* FROM ${statuses} AS s(status), LATERAL (
        SELECT id, status::text AS status, "createdAt", "startedAt", "completedAt" FROM ${job}
        WHERE "endpointId" = ${endpointId} AND status = s.status AND ${aliveSql(now)} ${before}
        ORDER BY "createdAt" DESC, id DESC LIMIT ${limit}
      ) page
      ORDER BY "createdAt" DESC, id DESC LIMIT ${limit}`);
  }

  /** How many jobs each of the endpoint's (or every endpoint's) workers holds. */
  async heldCounts(
    endpointId?: string,
  ): Promise<Array<{ endpointId: string; workerId: string; jobs: number }>> {
    const rows = await this.db.job.groupBy({
      by: ['endpointId', 'workerId'],
      where: {
        status: 'IN_PROGRESS',
        deletedAt: null,
        workerId: { not: null },
        ...(endpointId ? { endpointId } : {}),
      },
      _count: { _all: true },
    });
    return rows.map((r) => ({
      endpointId: r.endpointId,
      workerId: r.workerId!,
      jobs: r._count._all,
    }));
  }

  /**
   * Per endpoint: its normal-priority queued jobs counted up to `countUpTo`, its running jobs,
   * and when the oldest of the counted queued jobs entered the queue. Only the head of a queue is
   * read (in the order jobs are taken, through the queue index Job_queue_idx), so a tick
   * does not grow with the queue: counting 120,000 queued jobs whole took 26–38 ms a tick.
   *
   * The oldest entry is exact whenever the head holds every job created before it: a job's
   * queuedAt is never before its createdAt, so jobs further back entered the queue later. Only
   * more than `countUpTo` requeued jobs at the head can hide an older wait behind them.
   */
  async queueStats(
    limits: Array<{ endpointId: string; countUpTo: number }>,
    now = new Date(),
  ): Promise<QueueStats[]> {
    if (!limits.length) return [];
    const { job } = this.t.sql;
    const live = aliveSql(now, 'j');
    const rows = await this.db.$queryRaw<
      Array<{ endpointId: string; queued: number; running: number; oldest: Date | null }>
    >(Prisma.sql`
      SELECT e."endpointId", head.queued, head.oldest, busy.running
      FROM unnest(${limits.map((l) => l.endpointId)}::text[], ${limits.map((l) => l.countUpTo)}::int[])
        AS e("endpointId", "countUpTo"),
      LATERAL (
        SELECT count(*)::int AS queued, min(h."queuedAt") AS oldest FROM (
          SELECT j."queuedAt" FROM ${job} j
          WHERE j."endpointId" = e."endpointId" AND j.status = 'IN_QUEUE' AND NOT j."lowPriority" AND ${live}
          ORDER BY j."createdAt" LIMIT e."countUpTo") h
      ) head,
      LATERAL (
        SELECT count(*)::int AS running FROM ${job} j
        WHERE j."endpointId" = e."endpointId" AND j.status = 'IN_PROGRESS' AND ${live}
      ) busy`);
    return rows.map((r) => ({
      endpointId: r.endpointId,
      queued: r.queued,
      running: r.running,
      oldestQueuedAt: r.oldest ? new Date(r.oldest) : null,
    }));
  }

  /** What the client sent with the job (left out of every status read: it can be 20 MB). */
  async payload(jobId: string): Promise<{ input: unknown } | null> {
    return this.db.job.findUnique({ where: { id: jobId }, select: { input: true } });
  }

  /** The job's history, oldest first. */
  async events(jobId: string): Promise<JobEvent[]> {
    const rows = await this.db.jobEvent.findMany({ where: { jobId }, orderBy: { id: 'asc' } });
    return rows.map((r) => ({
      at: r.at.toISOString(),
      type: r.type as JobEventType,
      workerId: r.workerId,
      detail: r.detail,
    }));
  }
}
