import { Injectable } from '@nestjs/common';
import { DirectSql, GroupCommit } from '@runplane/database';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { JobEffects } from './job-effects.js';
import { SchedulerTables } from './scheduler-tables.js';
import {
  at,
  jsonList,
  jsonParam,
  newJobRow,
  WITHOUT_PAYLOAD,
  type JobRow,
  type JobState,
  type NewJob,
  PLANNED_ONCE,
} from './job-rows.js';
import { workerLeavingSql } from './job-rules.js';

interface Insert {
  job: NewJob;
  now: Date;
}

/**
 * New jobs and reads of their state. Both run on every job, so both go through group commit:
 * under load one statement serves many calls (see GroupCommit).
 */
@Injectable()
export class JobIntakeRepository {
  private readonly inserts = new GroupCommit<Insert, { row: JobRow; created: boolean }>((items) =>
    this.insertBatch(items),
  );
  private readonly reads = new GroupCommit<string, JobState | null>((ids) => this.readBatch(ids));

  constructor(
    private readonly db: PrismaClient,
    private readonly direct: DirectSql,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
  ) {}

  /** Inserts the job; a second insert of the same id (a retried submission) returns the stored one. */
  insert(job: NewJob, now: Date): Promise<{ row: JobRow; created: boolean }> {
    return this.inserts.call({ job, now });
  }

  find(id: string): Promise<JobState | null> {
    return this.reads.call(id);
  }

  /** The owner's job on that endpoint, tombstones included (callers decide visibility). */
  async findOwned(ownerId: string, endpointId: string, id: string): Promise<JobState | null> {
    const row = await this.reads.call(id);
    return row && row.ownerId === ownerId && row.endpointId === endpointId ? row : null;
  }

  /** `/status?ttl=`: the job now expires `ttlMs` after its submission. */
  async setTtl(id: string, ttlMs: number, expiresAt: Date): Promise<void> {
    await this.db.job.updateMany({ where: { id, deletedAt: null }, data: { ttlMs, expiresAt } });
  }

  /**
   * One statement for the whole batch: the jobs, their SUBMITTED events, and for a job offered to
   * a waiting worker (`offeredTo`) the claim a take would have made (IN_PROGRESS on it, TAKEN
   * event, the worker's "last busy" time) unless that worker is on its way out.
   */
  private async insertBatch(items: Insert[]): Promise<Array<{ row: JobRow; created: boolean }>> {
    const rows = items.map(({ job, now }) => newJobRow(job, now));
    const offeredTo = items.map(({ job }) => job.offeredTo ?? null);
    const { job, worker, jobStatus, event } = this.t.sql;
    const inserted = await this.direct.query<{
      id: string;
      workerId: string | null;
    }>(Prisma.sql`${PLANNED_ONCE}
      WITH candidates AS (
        SELECT c.*, (c."offeredTo" IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM ${worker} w WHERE w."endpointId" = c."endpointId" AND w.id = c."offeredTo" AND ${workerLeavingSql('w')}
          )) AS handed
        FROM ROWS FROM (unnest(
          ${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.endpointId)}::text[], ${rows.map((r) => r.ownerId)}::text[],
          ${rows.map((r) => r.mode)}::text[], ${rows.map((r) => r.webhook)}::text[],
          ${rows.map((r) => jsonParam(r.s3Config))}::text[], ${rows.map((r) => jsonParam(r.policy))}::text[],
          ${rows.map((r) => r.lowPriority)}::boolean[], ${rows.map((r) => r.executionTimeoutMs)}::int[], ${rows.map((r) => r.ttlMs)}::int[],
          ${rows.map((r) => at(r.createdAt))}::text[], ${rows.map((r) => at(r.expiresAt))}::text[], ${offeredTo}::text[]
        ), json_array_elements(${jsonList(rows.map((r) => r.input))}::json)
        ) AS c(id, "endpointId", "ownerId", mode, webhook, "s3Config", policy, "lowPriority", "executionTimeoutMs", "ttlMs",
               "createdAt", "expiresAt", "offeredTo", input)
      ), inserted AS (
        INSERT INTO ${job} (id, "endpointId", "ownerId", status, mode, input, webhook, "s3Config", policy, "lowPriority",
          "executionTimeoutMs", "ttlMs", retries, attempts, "createdAt", "queuedAt", "expiresAt", "streamSeq", "workerId", "startedAt", "timeoutAt")
        SELECT id, "endpointId", "ownerId", (CASE WHEN handed THEN 'IN_PROGRESS' ELSE 'IN_QUEUE' END)::${jobStatus}, mode, input,
          webhook, "s3Config"::json, policy::json, "lowPriority", "executionTimeoutMs", "ttlMs", 0, CASE WHEN handed THEN 1 ELSE 0 END,
          "createdAt"::timestamp(3), "createdAt"::timestamp(3), "expiresAt"::timestamp(3), 0, CASE WHEN handed THEN "offeredTo" END,
          CASE WHEN handed THEN "createdAt"::timestamp(3) END,
          CASE WHEN handed THEN "createdAt"::timestamp(3) + "executionTimeoutMs" * interval '1 millisecond' END
        FROM candidates
        ON CONFLICT (id) DO NOTHING
        RETURNING id, "endpointId", "workerId", "createdAt"
      ), busy AS (
        UPDATE ${worker} w SET "lastBusyAt" = offered."lastAt"
        FROM (SELECT "endpointId", "workerId", max("createdAt") AS "lastAt" FROM inserted WHERE "workerId" IS NOT NULL GROUP BY 1, 2) offered
        WHERE w."endpointId" = offered."endpointId" AND w.id = offered."workerId"
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId")
        SELECT i.id, i."createdAt", e.type, e."workerId"
        FROM inserted i, LATERAL (VALUES (0, 'SUBMITTED', NULL::text), (1, 'TAKEN', i."workerId")) AS e(n, type, "workerId")
        WHERE e.n = 0 OR i."workerId" IS NOT NULL
        ORDER BY i.id, e.n
      )
      SELECT id, "workerId" FROM inserted`);
    // One call per inserted id counts as its creator (the same id twice in a batch: the first).
    const fresh = new Map(inserted.map((r) => [r.id, r.workerId]));
    const creators = new Set<string>();
    const created = rows.map(
      (r) => fresh.has(r.id) && !creators.has(r.id) && Boolean(creators.add(r.id)),
    );
    const others = rows.filter((_, i) => !created[i]).map((r) => r.id);
    const existing = new Map(
      (others.length ? await this.db.job.findMany({ where: { id: { in: others } } }) : []).map(
        (r) => [r.id, r],
      ),
    );
    const results = rows.map((row, i) => {
      if (created[i]) {
        const workerId = fresh.get(row.id) ?? null;
        if (workerId)
          Object.assign(row, {
            status: 'IN_PROGRESS',
            workerId,
            startedAt: row.createdAt,
            attempts: 1,
            timeoutAt: new Date(row.createdAt.getTime() + row.executionTimeoutMs),
          });
        return { row, created: true };
      }
      const stored = existing.get(row.id);
      if (!stored) throw new Error(`job ${row.id} conflicted on insert but cannot be read`);
      return { row: stored, created: false };
    });
    this.effects.submitted(results.filter((r) => r.created).map((r) => r.row));
    return results;
  }

  private async readBatch(ids: string[]): Promise<Array<JobState | null>> {
    const rows = await this.db.job.findMany({
      where: { id: { in: [...new Set(ids)] } },
      omit: WITHOUT_PAYLOAD,
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
