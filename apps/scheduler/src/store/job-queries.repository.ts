import { Injectable } from '@nestjs/common';
import type { JobEvent, JobEventType, JobStatus } from '@runplane/contracts';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';
import { at, type HealthCounts, type QueueStats } from './job-rows.js';

/** Reads over many jobs: lists, counts, queue statistics, a job's history. */
@Injectable()
export class JobQueriesRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
  ) {}

  /** Newest first; `after` is the last row of the previous page. */
  list(
    endpointId: string,
    status: JobStatus | undefined,
    limit: number,
    after: { createdAt: Date; id: string } | undefined,
    now: Date,
  ) {
    return this.db.job.findMany({
      where: {
        endpointId,
        deletedAt: null,
        expiresAt: { gt: now },
        ...(status ? { status } : {}),
        ...(after
          ? {
              OR: [
                { createdAt: { lt: after.createdAt } },
                { createdAt: after.createdAt, id: { lt: after.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true, status: true, createdAt: true, startedAt: true, completedAt: true },
    });
  }

  async healthCounts(endpointId: string, now: Date): Promise<HealthCounts> {
    const where = { endpointId, deletedAt: null, expiresAt: { gt: now } };
    const [byStatus, retried] = await Promise.all([
      this.db.job.groupBy({ by: ['status'], where, _count: { _all: true } }),
      this.db.job.count({ where: { ...where, retries: { gt: 0 } } }),
    ]);
    const n = (s: JobStatus) => byStatus.find((r) => r.status === s)?._count._all ?? 0;
    return {
      completed: n('COMPLETED'),
      failed: n('FAILED'),
      inProgress: n('IN_PROGRESS'),
      inQueue: n('IN_QUEUE'),
      retried,
    };
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

  /** Queue lengths and the oldest normal-priority wait of every endpoint with pending work. */
  async queueStats(now = new Date()): Promise<QueueStats[]> {
    const rows = await this.db.$queryRaw<
      Array<{
        endpointId: string;
        queued: number;
        queuedLow: number;
        running: number;
        oldest: Date | null;
      }>
    >(Prisma.sql`
      SELECT "endpointId",
        (count(*) FILTER (WHERE status = 'IN_QUEUE' AND NOT "lowPriority"))::int AS queued,
        (count(*) FILTER (WHERE status = 'IN_QUEUE' AND "lowPriority"))::int AS "queuedLow",
        (count(*) FILTER (WHERE status = 'IN_PROGRESS'))::int AS running,
        min("queuedAt") FILTER (WHERE status = 'IN_QUEUE' AND NOT "lowPriority") AS oldest
      FROM ${this.t.sql.job}
      WHERE status IN ('IN_QUEUE', 'IN_PROGRESS') AND "deletedAt" IS NULL AND "expiresAt" > ${at(now)}::timestamp(3)
      GROUP BY "endpointId"`);
    return rows.map((r) => ({
      endpointId: r.endpointId,
      queued: r.queued,
      queuedLow: r.queuedLow,
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
