import { Injectable } from '@nestjs/common';
import { DirectSql } from '@runplane/database';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { JobEffects } from './job-effects.js';
import { SchedulerTables } from './scheduler-tables.js';
import { at, jsonParam, type ClaimedJob, PLANNED_ONCE } from './job-rows.js';
import { aliveSql, heldBySql, heldLiveSql, workerLeavingSql } from './job-rules.js';

/** At most one PROGRESS event per job in this window (a worker may post progress many times a second). */
const PROGRESS_EVENT_EVERY_MS = 5000;

/**
 * A job on its way through a worker: claimed from the queue, given back, progress and stream
 * chunks. (Results: `JobResultsRepository`; the job-stop channel: `JobStopsRepository`.)
 */
@Injectable()
export class JobDispatchRepository {
  constructor(
    private readonly db: PrismaClient,
    private readonly direct: DirectSql,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
  ) {}

  /**
   * Hands up to `limit` queued jobs of the endpoint to the worker, oldest first and low priority
   * last. `FOR UPDATE SKIP LOCKED` lets concurrent takes (other workers, other replicas) pass each
   * other without ever claiming the same job. A stop still pending for a job this worker now holds
   * again (a retried job) is withdrawn, or it would abort the new run. Never to a worker on its
   * way out, whatever the caller last saw of it (its view may be cached). One statement: the
   * claim, withdrawing stale stops, the worker's "last busy" time, the TAKEN events, and the
   * columns the worker is sent (no second read).
   *
   * `id = ANY(ARRAY(subquery))`, not `id IN (subquery)`: the planner may rescan an IN subquery,
   * and every rescan locks further rows, handing out more than LIMIT jobs.
   */
  async claim(
    endpointId: string,
    workerId: string,
    limit: number,
    now: Date,
  ): Promise<ClaimedJob[]> {
    const { job, stop, worker, event } = this.t.sql;
    const rows = await this.direct.query<ClaimedJob>(Prisma.sql`${PLANNED_ONCE}
      WITH claimed AS (
        UPDATE ${job} SET status = 'IN_PROGRESS', "workerId" = ${workerId}, "startedAt" = ${at(now)}::timestamp(3),
          "timeoutAt" = ${at(now)}::timestamp(3) + "executionTimeoutMs" * interval '1 millisecond', output = NULL, attempts = attempts + 1
        WHERE id = ANY(ARRAY(
          SELECT id FROM ${job}
          WHERE "endpointId" = ${endpointId} AND status = 'IN_QUEUE' AND ${aliveSql(now)}
            AND NOT EXISTS (SELECT 1 FROM ${worker} w WHERE w."endpointId" = ${endpointId} AND w.id = ${workerId} AND ${workerLeavingSql('w')})
          ORDER BY "lowPriority", "createdAt", id
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED))
        AND status = 'IN_QUEUE'
        RETURNING id, input, webhook, "s3Config", policy, "lowPriority", "createdAt"
      ), stale_stops AS (
        DELETE FROM ${stop} s USING claimed c WHERE s."jobId" = c.id AND s."workerId" = ${workerId} AND s."deliveredAt" IS NULL
      ), busy AS (
        UPDATE ${worker} SET "lastBusyAt" = ${at(now)}::timestamp(3)
        WHERE "endpointId" = ${endpointId} AND id = ${workerId} AND EXISTS (SELECT 1 FROM claimed)
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId") SELECT id, ${at(now)}::timestamp(3), 'TAKEN', ${workerId} FROM claimed
      )
      SELECT * FROM claimed`);
    this.effects.taken(rows, now);
    return rows.sort(
      (a, b) =>
        Number(a.lowPriority) - Number(b.lowPriority) ||
        new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime() ||
        a.id.localeCompare(b.id),
    );
  }

  /** Jobs taken but never delivered to the worker: back to the queue, no retry or attempt counted. */
  async release(
    endpointId: string,
    workerId: string,
    jobIds: string[],
    now: Date,
  ): Promise<number> {
    const { job, event } = this.t.sql;
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      WITH released AS (
        UPDATE ${job} j SET status = 'IN_QUEUE', "workerId" = NULL, "startedAt" = NULL, "timeoutAt" = NULL, output = NULL,
          "queuedAt" = ${at(now)}::timestamp(3), attempts = greatest(attempts - 1, 0)
        WHERE j.id = ANY(${jobIds}::text[]) AND ${heldBySql('j', endpointId, workerId)}
        RETURNING id
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId", detail)
        SELECT id, ${at(now)}::timestamp(3), 'REQUEUED', ${workerId}, 'given back: the job-take answer never reached the worker' FROM released
      )
      SELECT id FROM released`);
    this.effects.requeued(endpointId, undefined, rows.length);
    return rows.length;
  }

  /**
   * A progress update: shown as `output` while the job runs; ignored once it is final. Recorded
   * as a PROGRESS event at most once per job every few seconds (the output is not recorded).
   */
  async progress(
    endpointId: string,
    workerId: string,
    id: string,
    output: unknown,
    now: Date,
  ): Promise<boolean> {
    const { job, event } = this.t.sql;
    const rows = await this.db.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      WITH updated AS (
        UPDATE ${job} j SET output = ${jsonParam(output)}::json
        WHERE j.id = ${id} AND ${heldBySql('j', endpointId, workerId)}
        RETURNING id
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId")
        SELECT id, ${at(now)}::timestamp(3), 'PROGRESS', ${workerId} FROM updated u
        WHERE NOT EXISTS (SELECT 1 FROM ${event} e WHERE e."jobId" = u.id AND e.type = 'PROGRESS'
          AND e.at > ${at(now)}::timestamp(3) - ${PROGRESS_EVENT_EVERY_MS} * interval '1 millisecond')
      )
      SELECT id FROM updated`);
    if (rows.length) this.effects.updated(endpointId, id);
    return rows.length > 0;
  }

  /**
   * Appends stream chunks to a live job the worker holds, numbered after the previous ones, in
   * one statement. Its counter update locks the job row, so concurrent posts of one job keep
   * their order. False when the job is not held by this worker or gone (nothing is stored).
   */
  async appendChunks(
    endpointId: string,
    workerId: string,
    id: string,
    outputs: unknown[],
    now: Date,
  ): Promise<boolean> {
    const { job, chunk } = this.t.sql;
    const count = outputs.length;
    const rows = await this.direct.query<{ id: string }>(Prisma.sql`${PLANNED_ONCE}
      WITH bumped AS (
        UPDATE ${job} j SET "streamSeq" = j."streamSeq" + ${count}::int
        WHERE j.id = ${id} AND ${heldLiveSql('j', endpointId, workerId, now)}
        RETURNING j.id, j."streamSeq"
      ), appended AS (
        INSERT INTO ${chunk} ("jobId", seq, output, "createdAt")
        SELECT b.id, b."streamSeq" - ${count}::int + o.n::int, o.output::json, ${at(now)}::timestamp(3)
        FROM bumped b, unnest(${outputs.map((o) => JSON.stringify(o ?? null))}::text[]) WITH ORDINALITY AS o(output, n)
      )
      SELECT id FROM bumped`);
    if (rows.length) this.effects.updated(endpointId, id);
    return rows.length > 0;
  }

  /** Returns the chunks not returned before, in order, and marks them delivered (each once). */
  async drainChunks(id: string): Promise<unknown[]> {
    const rows = await this.db.$queryRaw<Array<{ seq: number; output: unknown }>>(
      Prisma.sql`UPDATE ${this.t.sql.chunk} SET delivered = true WHERE "jobId" = ${id} AND delivered = false RETURNING seq, output`,
    );
    return rows.sort((a, b) => a.seq - b.seq).map((r) => r.output);
  }
}
