import { Injectable } from '@nestjs/common';
import { JOB_LIMITS, type JobEvent, type JobEventType, type JobStatus } from '@runplane/contracts';
import { GroupCommit, OutboxRelay, type NewOutboxRow } from '@runplane/database';
import { PrismaClient, Prisma, type Job } from '../generated/prisma/client.js';
import { SchedulerTables } from '../shared/sql.js';
import { SchedulerMetrics } from '../metrics/scheduler-metrics.js';
import { SchedulerSettings } from '../settings.js';
import { jobFinishedOutboxRow } from './job-finished.js';

export type JobRow = Job;

/** A job's state without the request's payload (input, s3Config, policy): what status reads need. */
export type JobState = Omit<Job, 'input' | 's3Config' | 'policy'>;
/** The payload columns `JobState` reads leave out (an input can be 20 MB; every status poll reads the row). */
const WITHOUT_PAYLOAD = { input: true, s3Config: true, policy: true } as const;
/** The columns of a `JobState`, for raw statements that return one (`RETURNING`). */
const JOB_STATE_COLUMNS = [
  'id',
  '"endpointId"',
  '"ownerId"',
  'status',
  'mode',
  'webhook',
  '"lowPriority"',
  '"executionTimeoutMs"',
  '"ttlMs"',
  'output',
  'error',
  'retries',
  '"workerId"',
  '"createdAt"',
  '"queuedAt"',
  '"startedAt"',
  '"timeoutAt"',
  '"completedAt"',
  '"resultsExpireAt"',
  '"expiresAt"',
  '"deletedAt"',
  '"streamSeq"',
  'attempts',
] as const;

/** What a claim returns: the columns a worker is sent. */
export type ClaimedJob = Pick<
  Job,
  'id' | 'input' | 'webhook' | 's3Config' | 'policy' | 'lowPriority' | 'createdAt'
>;

export interface NewJob {
  id: string;
  endpointId: string;
  ownerId: string;
  mode: 'run' | 'runsync';
  input: Prisma.InputJsonValue;
  webhook?: string;
  s3Config?: Prisma.InputJsonValue;
  policy?: Prisma.InputJsonValue;
  lowPriority: boolean;
  executionTimeoutMs: number;
  ttlMs: number;
  /**
   * A worker whose job-take waits for work: the job is stored already running on it (handed over
   * in memory), unless that worker is on its way out; then it is queued like any other.
   */
  offeredTo?: string;
}

/** A result without webhook, finished in one statement (`finishPlain`). */
interface PlainFinish {
  endpointId: string;
  workerId: string;
  id: string;
  result: { status: 'COMPLETED' | 'FAILED'; output?: unknown; error?: string };
  now: Date;
}

/** The row `insert` writes for a new job (every column set, so no read-back is needed). */
function newJobRow(job: NewJob, now: Date): JobRow {
  return {
    id: job.id,
    endpointId: job.endpointId,
    ownerId: job.ownerId,
    status: 'IN_QUEUE',
    mode: job.mode,
    input: job.input as JobRow['input'],
    webhook: job.webhook ?? null,
    s3Config: (job.s3Config ?? null) as JobRow['s3Config'],
    policy: (job.policy ?? null) as JobRow['policy'],
    lowPriority: job.lowPriority,
    executionTimeoutMs: job.executionTimeoutMs,
    ttlMs: job.ttlMs,
    output: null,
    error: null,
    retries: 0,
    attempts: 0,
    workerId: null,
    createdAt: now,
    queuedAt: now,
    startedAt: null,
    timeoutAt: null,
    completedAt: null,
    resultsExpireAt: null,
    expiresAt: new Date(now.getTime() + job.ttlMs),
    deletedAt: null,
    streamSeq: 0,
  };
}

/** A job whose state a statement changed: enough to notify waiters and stop its worker. */
export interface ChangedJob {
  id: string;
  endpointId: string;
  workerId: string | null;
}

export interface HealthCounts {
  completed: number;
  failed: number;
  inProgress: number;
  inQueue: number;
  retried: number;
}

/** Per endpoint, what the autoscaler needs from the queue. */
export interface QueueStats {
  endpointId: string;
  queued: number;
  queuedLow: number;
  running: number;
  /** queuedAt of the oldest normal-priority queued job. */
  oldestQueuedAt: Date | null;
}

/** What a requeue of a lost worker's jobs did: jobs back in the queue, and jobs that used up their attempts (FAILED). */
export interface Requeued {
  requeued: ChangedJob[];
  failed: ChangedJob[];
}

/** At most one PROGRESS event per job in this window (a worker may post progress many times a second). */
const PROGRESS_EVENT_EVERY_MS = 5000;

export type StopReason =
  'cancelled' | 'timed-out' | 'expired' | 'requeued' | 'endpoint-deleted' | 'not-held';

const ts = (d: Date) => d.toISOString();
/** A value for a `$n::json` parameter of a raw statement: null and undefined leave the column empty (SQL NULL). */
const jsonParam = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
/** Result retention by mode, as SQL over the row being finalised. */
const RETENTION_SQL = `(CASE WHEN mode = 'runsync' THEN ${JOB_LIMITS.resultRetention.runsync} ELSE ${JOB_LIMITS.resultRetention.run} END) * interval '1 millisecond'`;
const FINAL: JobStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
/** Hooked jobs whose bodies are built and written per round inside a bulk finalisation (bounds memory). */
const OUTBOX_CHUNK = 50;
/** Bulk finalisations write up to 1000 jobs and their webhook events in one transaction. */
const BULK_TX = { timeout: 60_000, maxWait: 30_000 };
type Tx = Prisma.TransactionClient;

/**
 * Data access of jobs, their stream chunks and the job-stop channel; the only code that knows
 * these tables. Every state change is one conditional statement (`... WHERE status = <expected>`),
 * so concurrent callers and scheduler replicas each see a transition happen exactly once.
 *
 * Times are bound as ISO strings cast to `timestamp(3)`, the way Prisma stores DateTime (UTC
 * wall-clock), whatever the driver or the server's time zone.
 *
 * Every transition to a final state of a job with a `webhook` also writes its `job.finished.v1`
 * outbox row in the same transaction (`jobFinishedOutboxRow`), and kicks the outbox relay after
 * the commit: the event exists exactly when the final state does.
 */
@Injectable()
export class JobsRepository {
  /**
   * The statements every job runs (insert, read, plain finish) go through group commit: under load
   * one statement serves many calls (see GroupCommit).
   */
  private readonly inserts: GroupCommit<
    { job: NewJob; now: Date },
    { row: JobRow; created: boolean }
  >;
  private readonly reads: GroupCommit<string, JobState | null>;
  private readonly plainFinishes: GroupCommit<PlainFinish, JobState | null>;

  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
    private readonly outbox: OutboxRelay,
    private readonly metrics: SchedulerMetrics,
    private readonly settings: SchedulerSettings,
  ) {
    this.inserts = new GroupCommit((items) => this.insertBatch(items));
    this.reads = new GroupCommit((ids) => this.readBatch(ids));
    this.plainFinishes = new GroupCommit((items) => this.finishPlainBatch(items));
  }

  private q<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.db.$queryRawUnsafe<T[]>(sql, ...params);
  }

  /** Inserts the job; a second insert of the same id (a retried submission) returns the stored one. */
  insert(job: NewJob, now: Date): Promise<{ row: JobRow; created: boolean }> {
    return this.inserts.call({ job, now });
  }

  private async insertBatch(
    items: Array<{ job: NewJob; now: Date }>,
  ): Promise<Array<{ row: JobRow; created: boolean }>> {
    const rows = items.map(({ job, now }) => newJobRow(job, now));
    const { job, worker, jobStatus, event } = this.t;
    // An offered job runs at once on its worker, as a claim would have made it (see `claim`).
    const inserted = await this.q<{ id: string; workerId: string | null }>(
      `
      WITH n AS (
        SELECT n.*, (k IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${worker} w WHERE w."endpointId" = n.e AND w.id = n.k
          AND (w.state IN ('stopping', 'stopped') OR w."stopRequested"))) AS handed
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[],
          $10::int[], $11::int[], $12::text[], $13::text[], $14::text[]) AS n(id, e, o, m, i, w, s, p, l, x, t, c, d, k)
      ), ins AS (
        INSERT INTO ${job} (id, "endpointId", "ownerId", status, mode, input, webhook, "s3Config", policy, "lowPriority",
          "executionTimeoutMs", "ttlMs", retries, attempts, "createdAt", "queuedAt", "expiresAt", "streamSeq", "workerId", "startedAt", "timeoutAt")
        SELECT id, e, o, (CASE WHEN handed THEN 'IN_PROGRESS' ELSE 'IN_QUEUE' END)::${jobStatus}, m, i::json, w, s::json, p::json, l,
          x, t, 0, CASE WHEN handed THEN 1 ELSE 0 END, c::timestamp(3), c::timestamp(3), d::timestamp(3), 0, CASE WHEN handed THEN k END,
          CASE WHEN handed THEN c::timestamp(3) END, CASE WHEN handed THEN c::timestamp(3) + x * interval '1 millisecond' END
        FROM n
        ON CONFLICT (id) DO NOTHING
        RETURNING id, "endpointId", "workerId", "createdAt"
      ), b AS (
        UPDATE ${worker} w SET "lastBusyAt" = now.c
        FROM (SELECT "endpointId", "workerId", max("createdAt") AS c FROM ins WHERE "workerId" IS NOT NULL GROUP BY 1, 2) now
        WHERE w."endpointId" = now."endpointId" AND w.id = now."workerId"
      ), ev AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId")
        SELECT ins.id, ins."createdAt", e.type, e.w
        FROM ins, LATERAL (VALUES (0, 'SUBMITTED', NULL::text), (1, 'TAKEN', ins."workerId")) AS e(o, type, w)
        WHERE e.o = 0 OR ins."workerId" IS NOT NULL
        ORDER BY ins.id, e.o
      )
      SELECT id, "workerId" FROM ins`,
      rows.map((r) => r.id),
      rows.map((r) => r.endpointId),
      rows.map((r) => r.ownerId),
      rows.map((r) => r.mode),
      rows.map((r) => jsonParam(r.input)),
      rows.map((r) => r.webhook),
      rows.map((r) => jsonParam(r.s3Config)),
      rows.map((r) => jsonParam(r.policy)),
      rows.map((r) => r.lowPriority),
      rows.map((r) => r.executionTimeoutMs),
      rows.map((r) => r.ttlMs),
      rows.map((r) => ts(r.createdAt)),
      rows.map((r) => ts(r.expiresAt)),
      items.map(({ job: j }) => j.offeredTo ?? null),
    );
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
    return rows.map((row, i) => {
      if (created[i]) {
        const workerId = fresh.get(row.id) ?? null;
        this.metrics.submitted();
        if (workerId) {
          Object.assign(row, {
            status: 'IN_PROGRESS',
            workerId,
            startedAt: row.createdAt,
            attempts: 1,
            timeoutAt: new Date(row.createdAt.getTime() + row.executionTimeoutMs),
          });
          this.metrics.taken([row], row.createdAt);
        }
        return { row, created: true };
      }
      const stored = existing.get(row.id);
      if (!stored) throw new Error(`job ${row.id} conflicted on insert but cannot be read`);
      return { row: stored, created: false };
    });
  }

  find(id: string): Promise<JobState | null> {
    return this.reads.call(id);
  }

  /** The owner's job on that endpoint, tombstones included (callers decide visibility). */
  async findOwned(ownerId: string, endpointId: string, id: string): Promise<JobState | null> {
    const row = await this.reads.call(id);
    return row && row.ownerId === ownerId && row.endpointId === endpointId ? row : null;
  }

  private async readBatch(ids: string[]): Promise<Array<JobState | null>> {
    const rows = await this.db.job.findMany({
      where: { id: { in: [...new Set(ids)] } },
      omit: WITHOUT_PAYLOAD,
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** `/status?ttl=`: the job now expires `ttlMs` after its submission. */
  async setTtl(id: string, ttlMs: number, expiresAt: Date): Promise<void> {
    await this.db.job.updateMany({ where: { id, deletedAt: null }, data: { ttlMs, expiresAt } });
  }

  // ---- dispatch ------------------------------------------------------------------------------

  /**
   * Hands up to `limit` queued jobs of the endpoint to the worker, oldest first and low priority
   * last. `FOR UPDATE SKIP LOCKED` lets concurrent takes (other workers, other replicas) pass each
   * other without ever claiming the same job. A stop still pending for a job this worker now holds
   * again (a retried job) is withdrawn, or it would abort the new run.
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
    const { job, stop, worker, event } = this.t;
    // Never to a worker on its way out, whatever the caller last saw of it (its view may be cached).
    // One statement: the claim, withdrawing stale stops, the worker's "last busy" time, and the
    // columns the worker is sent (no second read).
    const rows = await this.q<ClaimedJob>(
      `
      WITH c AS (
        UPDATE ${job} SET status = 'IN_PROGRESS', "workerId" = $2, "startedAt" = $3::timestamp(3),
          "timeoutAt" = $3::timestamp(3) + "executionTimeoutMs" * interval '1 millisecond', output = NULL, attempts = attempts + 1
        WHERE id = ANY(ARRAY(
          SELECT id FROM ${job}
          WHERE "endpointId" = $1 AND status = 'IN_QUEUE' AND "deletedAt" IS NULL AND "expiresAt" > $3::timestamp(3)
            AND NOT EXISTS (SELECT 1 FROM ${worker} w WHERE w."endpointId" = $1 AND w.id = $2 AND (w.state IN ('stopping', 'stopped') OR w."stopRequested"))
          ORDER BY "lowPriority", "createdAt", id
          LIMIT $4
          FOR UPDATE SKIP LOCKED))
        AND status = 'IN_QUEUE'
        RETURNING id, input, webhook, "s3Config", policy, "lowPriority", "createdAt"
      ), d AS (
        DELETE FROM ${stop} s USING c WHERE s."jobId" = c.id AND s."workerId" = $2 AND s."deliveredAt" IS NULL
      ), b AS (
        UPDATE ${worker} SET "lastBusyAt" = $3::timestamp(3) WHERE "endpointId" = $1 AND id = $2 AND EXISTS (SELECT 1 FROM c)
      ), ev AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId") SELECT id, $3::timestamp(3), 'TAKEN', $2 FROM c
      )
      SELECT * FROM c`,
      endpointId,
      workerId,
      ts(now),
      limit,
    );
    this.metrics.taken(rows, now);
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
    const rows = await this.q<{ id: string }>(
      `
      WITH r AS (
        UPDATE ${this.t.job} SET status = 'IN_QUEUE', "workerId" = NULL, "startedAt" = NULL, "timeoutAt" = NULL, output = NULL,
          "queuedAt" = $4::timestamp(3), attempts = greatest(attempts - 1, 0)
        WHERE id = ANY($3::text[]) AND "endpointId" = $1 AND "workerId" = $2 AND status = 'IN_PROGRESS' AND "deletedAt" IS NULL
        RETURNING id
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId", detail)
        SELECT id, $4::timestamp(3), 'REQUEUED', $2, 'given back: the job-take answer never reached the worker' FROM r
      )
      SELECT id FROM r`,
      endpointId,
      workerId,
      jobIds,
      ts(now),
    );
    return rows.length;
  }

  // ---- results from workers ------------------------------------------------------------------

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
    const rows = await this.q<{ id: string }>(
      `
      WITH p AS (
        UPDATE ${this.t.job} SET output = $4::json
        WHERE id = $3 AND "endpointId" = $1 AND "workerId" = $2 AND status = 'IN_PROGRESS' AND "deletedAt" IS NULL
        RETURNING id
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId")
        SELECT id, $5::timestamp(3), 'PROGRESS', $2 FROM p
        WHERE NOT EXISTS (SELECT 1 FROM ${this.t.event} e WHERE e."jobId" = p.id AND e.type = 'PROGRESS'
          AND e.at > $5::timestamp(3) - $6 * interval '1 millisecond')
      )
      SELECT id FROM p`,
      endpointId,
      workerId,
      id,
      jsonParam(output),
      ts(now),
      PROGRESS_EVENT_EVERY_MS,
    );
    return rows.length > 0;
  }

  /** The final result; only the first one for the worker holding the job counts. Returns the finished job, or null. */
  async finish(
    endpointId: string,
    workerId: string,
    id: string,
    result: {
      status: 'COMPLETED' | 'FAILED';
      output?: Prisma.InputJsonValue | typeof Prisma.DbNull;
      error?: string;
    },
    now: Date,
    retentionMs: number,
    hasWebhook = true,
  ): Promise<JobState | null> {
    const data = {
      status: result.status,
      output: result.output ?? Prisma.DbNull,
      error: result.error ?? null,
      completedAt: now,
      timeoutAt: null,
      resultsExpireAt: new Date(now.getTime() + retentionMs),
    };
    const where = { id, endpointId, workerId, status: 'IN_PROGRESS' as const, deletedAt: null };
    const finished = await this.db.$transaction(async (tx) => {
      const [row] = await tx.job.updateManyAndReturn({
        where,
        data,
        ...(hasWebhook ? {} : { omit: WITHOUT_PAYLOAD }),
      });
      if (!row) return null;
      await tx.jobEvent.create({ data: { jobId: id, at: now, type: result.status, workerId } });
      // A job's webhook is fixed at submission: without one there is nothing to announce.
      const event = hasWebhook ? jobFinishedOutboxRow(row as JobRow, now) : null;
      if (event) await writeOutbox(tx, [event]);
      return { row, announced: event !== null };
    }, BULK_TX);
    if (!finished) return null;
    if (finished.announced) this.outbox.kick();
    this.metrics.finished(result.status, [finished.row], now);
    const { input: _input, s3Config: _s3, policy: _policy, ...state } = finished.row as JobRow;
    return state;
  }

  /**
   * The common case of a result in one statement: a job without webhook (nothing to announce) that
   * this worker holds and that is still alive gets its final state, and the worker its "last busy"
   * time. Returns the finished job; null when the job is not in that case (the caller then takes
   * the general path).
   */
  finishPlain(
    endpointId: string,
    workerId: string,
    id: string,
    result: { status: 'COMPLETED' | 'FAILED'; output?: unknown; error?: string },
    now: Date,
  ): Promise<JobState | null> {
    return this.plainFinishes.call({ endpointId, workerId, id, result, now });
  }

  private async finishPlainBatch(items: PlainFinish[]): Promise<Array<JobState | null>> {
    // Two posts for one job in one batch: only the first may finish it (the later one is a repeat).
    const first = new Map<string, PlainFinish>();
    for (const item of items) if (!first.has(item.id)) first.set(item.id, item);
    const batch = [...first.values()];
    const now = items[items.length - 1].now;
    const rows = await this.q<JobState>(
      `
      WITH v AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS v(id, e, w, st, o, err)
      ), f AS (
        UPDATE ${this.t.job} j SET status = v.st::${this.t.jobStatus}, output = v.o::json, error = v.err, "completedAt" = $7::timestamp(3),
          "timeoutAt" = NULL, "resultsExpireAt" = $7::timestamp(3) + ${RETENTION_SQL}
        FROM v
        WHERE j.id = v.id AND j."endpointId" = v.e AND j."workerId" = v.w AND j.status = 'IN_PROGRESS' AND j."deletedAt" IS NULL
          AND j."expiresAt" > $7::timestamp(3) AND j.webhook IS NULL
        RETURNING ${JOB_STATE_COLUMNS.map((c) => `j.${c}`).join(', ')}
      ), b AS (
        UPDATE ${this.t.worker} w SET "lastBusyAt" = $7::timestamp(3)
        FROM (SELECT DISTINCT "endpointId", "workerId" FROM f) x WHERE w."endpointId" = x."endpointId" AND w.id = x."workerId"
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId") SELECT id, $7::timestamp(3), status::text, "workerId" FROM f
      )
      SELECT * FROM f`,
      batch.map((b) => b.id),
      batch.map((b) => b.endpointId),
      batch.map((b) => b.workerId),
      batch.map((b) => b.result.status),
      batch.map((b) => jsonParam(b.result.output)),
      batch.map((b) => b.result.error ?? null),
      ts(now),
    );
    const finished = new Map(rows.map((r) => [r.id, r]));
    for (const status of ['COMPLETED', 'FAILED'] as const) {
      const of = rows.filter((r) => r.status === status);
      if (of.length) this.metrics.finished(status, of, now);
    }
    return items.map((item) =>
      first.get(item.id) === item ? (finished.get(item.id) ?? null) : null,
    );
  }

  /**
   * Appends stream chunks to a job the worker holds, numbered after the previous ones. The
   * counter update locks the job row, so concurrent posts of one job keep their order.
   */
  async appendChunks(
    endpointId: string,
    workerId: string,
    id: string,
    outputs: unknown[],
    now: Date,
  ): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const { count } = await tx.job.updateMany({
        where: { id, endpointId, workerId, status: 'IN_PROGRESS', deletedAt: null },
        data: { streamSeq: { increment: outputs.length } },
      });
      if (!count) return false;
      const { streamSeq } = await tx.job.findUniqueOrThrow({
        where: { id },
        select: { streamSeq: true },
      });
      const first = streamSeq - outputs.length + 1;
      await tx.jobStreamChunk.createMany({
        data: outputs.map((output, i) => ({
          jobId: id,
          seq: first + i,
          output: toJson(output),
          createdAt: now,
        })),
      });
      return true;
    });
  }

  /** Returns the chunks not returned before, in order, and marks them delivered (each once). */
  async drainChunks(id: string): Promise<unknown[]> {
    const rows = await this.q<{ seq: number; output: unknown }>(
      `UPDATE ${this.t.chunk} SET delivered = true WHERE "jobId" = $1 AND delivered = false RETURNING seq, output`,
      id,
    );
    return rows.sort((a, b) => a.seq - b.seq).map((r) => r.output);
  }

  // ---- client operations ---------------------------------------------------------------------

  /**
   * IN_QUEUE or IN_PROGRESS → CANCELLED at once; a running job's worker is told on job-stop.
   * Returns the job when this call cancelled it.
   */
  async cancel(id: string, now: Date): Promise<ChangedJob | null> {
    const [row] = await this.finalize(
      `id = $4 AND status IN ('IN_QUEUE', 'IN_PROGRESS') AND "deletedAt" IS NULL`,
      'CANCELLED',
      'cancelled',
      now,
      [id],
    );
    return row ?? null;
  }

  /**
   * FAILED / TIMED_OUT with results still kept → IN_QUEUE under the same id, previous result and
   * stream removed, `retries` + 1. Returns false when the job is not in such a state.
   */
  async retry(id: string, now: Date): Promise<boolean> {
    const rows = await this.q<{ id: string }>(
      `
      WITH r AS (
        UPDATE ${this.t.job} SET status = 'IN_QUEUE', retries = retries + 1, attempts = 0, output = NULL, error = NULL, "workerId" = NULL,
          "startedAt" = NULL, "completedAt" = NULL, "timeoutAt" = NULL, "resultsExpireAt" = NULL, "queuedAt" = $2::timestamp(3)
        WHERE id = $1 AND status IN ('FAILED', 'TIMED_OUT') AND "deletedAt" IS NULL
          AND "resultsExpireAt" > $2::timestamp(3) AND "expiresAt" > $2::timestamp(3)
        RETURNING id
      ), d AS (DELETE FROM ${this.t.chunk} c USING r WHERE c."jobId" = r.id),
      ev AS (INSERT INTO ${this.t.event} ("jobId", at, type) SELECT id, $2::timestamp(3), 'RETRIED' FROM r)
      SELECT id FROM r`,
      id,
      ts(now),
    );
    return rows.length > 0;
  }

  /** Removes the endpoint's queued jobs (running ones continue); returns how many. */
  async purgeQueued(endpointId: string): Promise<number> {
    const { count } = await this.db.job.deleteMany({
      where: { endpointId, status: 'IN_QUEUE', deletedAt: null },
    });
    return count;
  }

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

  /** How many jobs each of the endpoint's workers holds. */
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
  async queueStats(): Promise<QueueStats[]> {
    const rows = await this.q<{
      endpointId: string;
      queued: number;
      queuedLow: number;
      running: number;
      oldest: Date | null;
    }>(
      `
      SELECT "endpointId",
        (count(*) FILTER (WHERE status = 'IN_QUEUE' AND NOT "lowPriority"))::int AS queued,
        (count(*) FILTER (WHERE status = 'IN_QUEUE' AND "lowPriority"))::int AS "queuedLow",
        (count(*) FILTER (WHERE status = 'IN_PROGRESS'))::int AS running,
        min("queuedAt") FILTER (WHERE status = 'IN_QUEUE' AND NOT "lowPriority") AS oldest
      FROM ${this.t.job}
      WHERE status IN ('IN_QUEUE', 'IN_PROGRESS') AND "deletedAt" IS NULL AND "expiresAt" > $1::timestamp(3)
      GROUP BY "endpointId"`,
      ts(new Date()),
    );
    return rows.map((r) => ({
      endpointId: r.endpointId,
      queued: r.queued,
      queuedLow: r.queuedLow,
      running: r.running,
      oldestQueuedAt: r.oldest ? new Date(r.oldest) : null,
    }));
  }

  // ---- the job-stop channel ------------------------------------------------------------------

  /** Takes the stops waiting for this worker; each is handed out once. */
  async deliverStops(endpointId: string, workerId: string, now: Date): Promise<string[]> {
    const rows = await this.q<{ jobId: string }>(
      `UPDATE ${this.t.stop} SET "deliveredAt" = $3::timestamp(3)
       WHERE "endpointId" = $1 AND "workerId" = $2 AND "deliveredAt" IS NULL RETURNING "jobId"`,
      endpointId,
      workerId,
      ts(now),
    );
    return rows.map((r) => r.jobId).sort();
  }

  /**
   * Tells the worker to drop jobs it still reports (ping) but no longer holds: cancelled, requeued
   * to another worker, expired. A stop handed out before `redeliverBefore` whose job the worker
   * still reports is handed out again (the job-stop response may never have reached it).
   */
  async stopIfNotHeld(
    endpointId: string,
    workerId: string,
    jobIds: string[],
    now: Date,
    redeliverBefore: Date,
  ): Promise<number> {
    if (!jobIds.length) return 0;
    const rows = await this.q<{ jobId: string }>(
      `
      INSERT INTO ${this.t.stop} AS s ("jobId", "workerId", "endpointId", reason, "createdAt")
      SELECT j.id, $2, $1, 'not-held', $4::timestamp(3) FROM ${this.t.job} j
      WHERE j.id = ANY($3::text[]) AND j."endpointId" = $1
        AND NOT (j.status = 'IN_PROGRESS' AND j."workerId" = $2 AND j."deletedAt" IS NULL)
      ON CONFLICT ("jobId", "workerId") DO UPDATE SET "deliveredAt" = NULL
        WHERE s."deliveredAt" < $5::timestamp(3)
      RETURNING "jobId"`,
      endpointId,
      workerId,
      jobIds,
      ts(now),
      ts(redeliverBefore),
    );
    return rows.length;
  }

  // ---- durable timers (run by the sweeper) ---------------------------------------------------

  /** IN_PROGRESS past its execution timeout → TIMED_OUT, worker told to stop. */
  timeOut(now: Date): Promise<ChangedJob[]> {
    return this.finalize(
      `status = 'IN_PROGRESS' AND "timeoutAt" <= $1::timestamp(3) AND "deletedAt" IS NULL`,
      'TIMED_OUT',
      'timed-out',
      now,
      [],
    );
  }

  /**
   * TTL elapsed → the job is deleted: a tombstone (404 everywhere) whose worker is told to stop and
   * whose late result is dropped quietly.
   */
  async expire(now: Date): Promise<ChangedJob[]> {
    return this.q<ChangedJob>(
      `
      WITH e AS (
        UPDATE ${this.t.job} SET "deletedAt" = $1::timestamp(3), output = NULL, error = NULL, "timeoutAt" = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${this.t.job} WHERE "expiresAt" <= $1::timestamp(3) AND "deletedAt" IS NULL
                     LIMIT 1000 FOR UPDATE SKIP LOCKED))
        RETURNING id, "endpointId", "workerId", status
      ), s AS (
        INSERT INTO ${this.t.stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, "workerId", "endpointId", 'expired', $1::timestamp(3) FROM e WHERE status = 'IN_PROGRESS' AND "workerId" IS NOT NULL
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId", detail)
        SELECT e.id, $1::timestamp(3), v.type, v.w, v.d
        FROM e, LATERAL (VALUES (0, 'STOP_SENT', e."workerId", 'ttl elapsed'), (1, 'EXPIRED', NULL, NULL)) AS v(o, type, w, d)
        WHERE v.o = 1 OR (e.status = 'IN_PROGRESS' AND e."workerId" IS NOT NULL)
        ORDER BY e.id, v.o
      )
      SELECT id, "endpointId", CASE WHEN status = 'IN_PROGRESS' THEN "workerId" END AS "workerId" FROM e`,
      ts(now),
    );
  }

  /**
   * Result retention elapsed → output, error and stream removed. `resultsExpireAt` becomes NULL:
   * on a final job that means "results expired" (retry refused) and keeps this sweep's index
   * range small.
   */
  async expireResults(now: Date): Promise<number> {
    const rows = await this.q<{ id: string }>(
      `
      WITH r AS (
        UPDATE ${this.t.job} SET output = NULL, error = NULL, "resultsExpireAt" = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${this.t.job} WHERE "resultsExpireAt" <= $1::timestamp(3) LIMIT 1000 FOR UPDATE SKIP LOCKED))
        RETURNING id
      ), d AS (DELETE FROM ${this.t.chunk} c USING r WHERE c."jobId" = r.id)
      SELECT id FROM r`,
      ts(now),
    );
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
    const { rows, announced } = await this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<
        Array<ChangedJob & { failed: boolean; hooked: boolean; startedAt: Date | null }>
      >(
        `
      WITH r AS (
        UPDATE ${this.t.job} SET
          status = (CASE WHEN attempts >= $4 THEN 'FAILED' ELSE 'IN_QUEUE' END)::${this.t.jobStatus},
          "workerId" = CASE WHEN attempts >= $4 THEN "workerId" END,
          "startedAt" = CASE WHEN attempts >= $4 THEN "startedAt" END,
          "queuedAt" = CASE WHEN attempts >= $4 THEN "queuedAt" ELSE $3::timestamp(3) END,
          "completedAt" = CASE WHEN attempts >= $4 THEN $3::timestamp(3) END,
          "resultsExpireAt" = CASE WHEN attempts >= $4 THEN $3::timestamp(3) + ${RETENTION_SQL} END,
          error = CASE WHEN attempts >= $4 THEN format('the job''s worker was lost %s times while running it (RUNPLANE_JOB_MAX_ATTEMPTS=%s); last: %s', attempts, $4, $5::text) END,
          retries = retries + CASE WHEN attempts >= $4 THEN 0 ELSE 1 END,
          "timeoutAt" = NULL, output = NULL
        WHERE "endpointId" = $1 AND "workerId" = $2 AND status = 'IN_PROGRESS' AND "deletedAt" IS NULL
          AND "expiresAt" > $3::timestamp(3) AND "timeoutAt" > $3::timestamp(3)
          ${unreported ? `AND "startedAt" < $7::timestamp(3) AND NOT (id = ANY($6::text[]))` : ''}
        RETURNING id, "endpointId", status = 'FAILED' AS failed, webhook IS NOT NULL AS hooked, "startedAt", error
      ), s AS (
        INSERT INTO ${this.t.stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, $2, "endpointId", 'requeued', $3::timestamp(3) FROM r
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId", detail)
        SELECT id, $3::timestamp(3), CASE WHEN failed THEN 'FAILED' ELSE 'REQUEUED' END, $2, CASE WHEN failed THEN error ELSE $5::text END FROM r
      )
      SELECT id, "endpointId", NULL AS "workerId", failed, hooked, "startedAt" FROM r`,
        endpointId,
        workerId,
        ts(now),
        max,
        reason,
        ...(unreported ? [unreported.reported, ts(unreported.startedBefore)] : []),
      );
      const hooked = rows.filter((r) => r.failed && r.hooked).map((r) => r.id);
      if (hooked.length) {
        const jobs = await tx.job.findMany({ where: { id: { in: hooked } } });
        await writeOutbox(
          tx,
          jobs
            .map((j) => jobFinishedOutboxRow(j, now))
            .filter((e): e is NewOutboxRow => e !== null),
        );
      }
      return { rows, announced: hooked.length > 0 };
    }, BULK_TX);
    const failed = rows.filter((r) => r.failed);
    if (failed.length) this.metrics.finished('FAILED', failed, now);
    if (announced) this.outbox.kick();
    const changed = ({ id, endpointId: e }: ChangedJob) => ({ id, endpointId: e, workerId: null });
    return {
      requeued: rows.filter((r) => !r.failed).map(changed),
      failed: failed.map(changed),
    };
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

  /** The endpoint is deleted: queued jobs removed, running ones cancelled (their workers stop). */
  async removeForEndpoint(endpointId: string, now: Date): Promise<ChangedJob[]> {
    await this.db.job.deleteMany({ where: { endpointId, status: 'IN_QUEUE' } });
    const cancelled: ChangedJob[] = [];
    for (;;) {
      const batch = await this.finalize(
        `"endpointId" = $4 AND status = 'IN_PROGRESS' AND "deletedAt" IS NULL`,
        'CANCELLED',
        'endpoint-deleted',
        now,
        [endpointId],
      );
      cancelled.push(...batch);
      if (batch.length < 1000) return cancelled;
    }
  }

  /** Forgets tombstones and delivered stops after an hour, undelivered stops after a day. */
  async cleanup(now: Date): Promise<void> {
    const hourAgo = new Date(now.getTime() - 3600_000);
    await this.db.job.deleteMany({ where: { deletedAt: { lt: hourAgo } } });
    await this.db.jobStop.deleteMany({
      where: {
        OR: [
          { deliveredAt: { lt: hourAgo } },
          { createdAt: { lt: new Date(now.getTime() - 86_400_000) } },
        ],
      },
    });
  }

  /**
   * Moves the jobs matching `where` (parameters from $4) to a final state and records a stop for
   * the worker of each running one, in one statement.
   */
  private async finalize(
    where: string,
    status: 'CANCELLED' | 'TIMED_OUT',
    reason: StopReason,
    now: Date,
    params: unknown[],
  ): Promise<ChangedJob[]> {
    if (!FINAL.includes(status)) throw new Error(`not a final status: ${status}`);
    const { changed, announced, rows } = await this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<
        Array<ChangedJob & { hooked: boolean; startedAt: Date | null }>
      >(
        `
      WITH f AS (
        UPDATE ${this.t.job} SET status = $2::${this.t.jobStatus}, "completedAt" = $1::timestamp(3),
          "resultsExpireAt" = $1::timestamp(3) + ${RETENTION_SQL}, "timeoutAt" = NULL, output = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${this.t.job} WHERE ${where} LIMIT 1000 FOR UPDATE SKIP LOCKED)) AND ${where}
        RETURNING id, "endpointId", "workerId", "startedAt", webhook IS NOT NULL AS hooked
      ), s AS (
        INSERT INTO ${this.t.stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, "workerId", "endpointId", $3, $1::timestamp(3) FROM f WHERE "workerId" IS NOT NULL
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), ev AS (
        INSERT INTO ${this.t.event} ("jobId", at, type, "workerId", detail)
        SELECT f.id, $1::timestamp(3), v.type, f."workerId", v.d
        FROM f, LATERAL (VALUES (0, 'STOP_SENT', $3::text), (1, $2::text, NULL)) AS v(o, type, d)
        WHERE v.o = 1 OR f."workerId" IS NOT NULL
        ORDER BY f.id, v.o
      )
      SELECT id, "endpointId", "workerId", "startedAt", hooked FROM f`,
        ts(now),
        status,
        reason,
        ...params,
      );
      // The rows are locked by the UPDATE until the commit: what is read here is what it wrote.
      const hooked = rows.filter((r) => r.hooked).map((r) => r.id);
      for (let i = 0; i < hooked.length; i += OUTBOX_CHUNK) {
        const jobs = await tx.job.findMany({
          where: { id: { in: hooked.slice(i, i + OUTBOX_CHUNK) } },
        });
        await writeOutbox(
          tx,
          jobs
            .map((j) => jobFinishedOutboxRow(j, now))
            .filter((e): e is NewOutboxRow => e !== null),
        );
      }
      return {
        changed: rows.map(({ id, endpointId, workerId }) => ({ id, endpointId, workerId })),
        announced: hooked.length > 0,
        rows,
      };
    }, BULK_TX);
    this.metrics.finished(status, rows, now);
    if (announced) this.outbox.kick();
    return changed;
  }
}

async function writeOutbox(tx: Tx, rows: NewOutboxRow[]): Promise<void> {
  if (rows.length)
    await tx.outboxEvent.createMany({
      data: rows.map((r) => ({ ...r, payload: r.payload as Prisma.InputJsonValue })),
    });
}

/** A JSON value for a required Json column; `null` must be Prisma's JsonNull there. */
export function toJson(value: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  return value === null || value === undefined ? Prisma.JsonNull : (value as Prisma.InputJsonValue);
}

/** A JSON value for an optional Json column: null and undefined leave it empty (no `output`). */
export function toOptionalJson(value: unknown): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null || value === undefined ? Prisma.DbNull : (value as Prisma.InputJsonValue);
}
