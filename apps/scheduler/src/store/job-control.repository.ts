import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';
import { JobDeletions } from './job-deletions.js';
import { JobEffects } from './job-effects.js';
import { at, type ChangedJob } from './job-rows.js';
import { aliveSql, BULK_LIMIT } from './job-rules.js';

/** What clients do to their jobs (cancel, retry, purge) and the end of a deleted endpoint's jobs. */
@Injectable()
export class JobControlRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
    private readonly deletions: JobDeletions,
  ) {}

  /**
   * IN_QUEUE or IN_PROGRESS → CANCELLED at once; a running job's worker is told on job-stop.
   * Returns the job when this call cancelled it.
   */
  async cancel(id: string, now: Date): Promise<ChangedJob | null> {
    const [row] = await this.effects.finalizeWhere(
      Prisma.sql`id = ${id} AND status IN ('IN_QUEUE', 'IN_PROGRESS') AND "deletedAt" IS NULL`,
      'CANCELLED',
      'cancelled',
      now,
    );
    return row ?? null;
  }

  /**
   * FAILED / TIMED_OUT with results still kept → IN_QUEUE under the same id, previous result and
   * stream removed, `retries` + 1. Returns false when the job is not in such a state.
   */
  async retry({ id, endpointId }: { id: string; endpointId: string }, now: Date): Promise<boolean> {
    const { job, chunk, event } = this.t.sql;
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      WITH retried AS (
        UPDATE ${job} SET status = 'IN_QUEUE', retries = retries + 1, attempts = 0, output = NULL, error = NULL, "workerId" = NULL,
          "startedAt" = NULL, "completedAt" = NULL, "timeoutAt" = NULL, "resultsExpireAt" = NULL, "queuedAt" = ${at(now)}::timestamp(3)
        WHERE id = ${id} AND status IN ('FAILED', 'TIMED_OUT') AND ${aliveSql(now)}
          AND "resultsExpireAt" > ${at(now)}::timestamp(3)
        RETURNING id
      ), old_chunks AS (DELETE FROM ${chunk} c USING retried r WHERE c."jobId" = r.id),
      events AS (INSERT INTO ${event} ("jobId", at, type) SELECT id, ${at(now)}::timestamp(3), 'RETRIED' FROM retried)
      SELECT id FROM retried`);
    if (rows.length) this.effects.requeued(endpointId, id);
    return rows.length > 0;
  }

  /** Removes the endpoint's queued jobs (running ones continue); returns how many. */
  async purgeQueued(endpointId: string): Promise<number> {
    const count = await this.deletions.deleteWhere(
      Prisma.sql`"endpointId" = ${endpointId} AND status = 'IN_QUEUE' AND "deletedAt" IS NULL`,
    );
    if (count) this.effects.updated(endpointId);
    return count;
  }

  /** The endpoint is deleted: queued jobs removed, running ones cancelled (their workers stop). */
  async removeForEndpoint(endpointId: string, now: Date): Promise<ChangedJob[]> {
    await this.deletions.deleteWhere(
      Prisma.sql`"endpointId" = ${endpointId} AND status = 'IN_QUEUE'`,
    );
    const cancelled: ChangedJob[] = [];
    for (;;) {
      const batch = await this.effects.finalizeWhere(
        Prisma.sql`"endpointId" = ${endpointId} AND status = 'IN_PROGRESS' AND "deletedAt" IS NULL`,
        'CANCELLED',
        'endpoint-deleted',
        now,
      );
      cancelled.push(...batch);
      if (batch.length < BULK_LIMIT) return cancelled;
    }
  }
}
