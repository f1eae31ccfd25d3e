import { Injectable } from '@nestjs/common';
import { OutboxRelay, type NewOutboxRow, type SqlTransaction } from '@runplane/database';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerMetrics } from '../metrics/scheduler-metrics.js';
import { ANY_JOB, JobChanges } from '../shared/job-changes.js';
import { SchedulerTables } from './scheduler-tables.js';
import { jobFinishedOutboxRow } from './job-finished.js';
import { at, type ChangedJob, type JobRow, type StopReason } from './job-rows.js';
import { BULK_LIMIT, BULK_TX, RESULT_RETENTION_SQL } from './job-rules.js';

type Tx = Prisma.TransactionClient;
type FinalStatus = 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/** Hooked jobs whose bodies are built and written per round inside a bulk finalisation (bounds memory). */
const OUTBOX_CHUNK = 50;
/** Bound of the jobs remembered as handed out with a webhook (only an optimisation: cleared then). */
const HOOKED_MEMORY = 100_000;

/**
 * What every transition of a job does besides the state itself, in one place: for a final state
 * the `job.finished.v1` outbox row of a job with a webhook, written in the transition's transaction
 * (the event exists exactly when the final state does), the relay kicked after the commit and the
 * job metrics; for every change the wake-ups of the long polls it concerns (`JobChanges`). Also the
 * bulk transition of many jobs to CANCELLED or TIMED_OUT.
 */
@Injectable()
export class JobEffects {
  /** Jobs with a webhook this replica handed to a worker (`handedWithWebhook`). */
  private readonly hookedRunning = new Set<string>();

  constructor(
    private readonly db: PrismaClient,
    private readonly t: SchedulerTables,
    private readonly outbox: OutboxRelay,
    private readonly metrics: SchedulerMetrics,
    private readonly changes: JobChanges,
  ) {}

  /**
   * New jobs were stored: counted, and one waiting job-take looks for each queued one (a job handed
   * to a waiting worker is already running on it); the autoscaler looks too.
   */
  submitted(
    jobs: Array<{
      endpointId: string;
      id: string;
      workerId: string | null;
      webhook: string | null;
      createdAt: Date;
    }>,
  ): void {
    for (const job of jobs) {
      this.metrics.submitted();
      if (job.workerId) {
        this.metrics.taken([job], job.createdAt);
        if (job.webhook) this.rememberHooked(job.id);
      }
      this.changes.changed(job.endpointId, job.id, { queued: job.workerId ? 0 : 1, scaling: true });
    }
  }

  /** Jobs a worker just claimed: their queue delay. */
  taken(
    jobs: Array<{ id: string; webhook: string | null; createdAt: Date | string }>,
    now: Date,
  ): void {
    this.metrics.taken(jobs, now);
    for (const job of jobs) if (job.webhook) this.rememberHooked(job.id);
  }

  /**
   * Whether this replica handed the job to a worker knowing it has a webhook, so that its result
   * can go straight to the finish that announces it. Asked once per job (forgotten then); false
   * when not known here (another replica handed it out, or this one restarted since).
   */
  handedWithWebhook(id: string): boolean {
    return this.hookedRunning.delete(id);
  }

  private rememberHooked(id: string): void {
    if (this.hookedRunning.size >= HOOKED_MEMORY) this.hookedRunning.clear();
    this.hookedRunning.add(id);
  }

  /** A job became claimable again (retried, given back): one waiting job-take, and the autoscaler. */
  requeued(endpointId: string, jobId: string = ANY_JOB, count = 1): void {
    if (count > 0) this.changes.changed(endpointId, jobId, { queued: count, scaling: true });
  }

  /** The job changed while it runs or waits (progress, stream chunks, purge): its waiters look again. */
  updated(endpointId: string, jobId: string = ANY_JOB): void {
    this.changes.changed(endpointId, jobId);
  }

  /** Job-stop rows were written for the endpoint's workers: their job-stop polls look again. */
  stopsWritten(endpointId: string): void {
    this.changes.changed(endpointId, ANY_JOB, { stops: true });
  }

  /** Jobs ended by the system or a client (cancelled, timed out, expired): waiters and workers hear. */
  ended(jobs: ChangedJob[]): void {
    this.changes.announce(jobs, 'ended');
  }

  /**
   * A lost worker's jobs went back to the queue (`requeued`) or failed for good (`failed`); the
   * stops of both went to the lost worker.
   */
  lost(requeued: ChangedJob[], failed: ChangedJob[]): void {
    this.changes.announce(requeued, 'requeued');
    this.changes.announce(
      failed.map(({ id, endpointId }) => ({ id, endpointId })),
      'ended',
    );
  }

  /**
   * Inside the transition's transaction: writes the outbox rows of these final jobs (those with a
   * webhook) in one statement and returns them. Unleased, for the relay (`finished` kicks it);
   * leased, for the writer to publish right after the commit (`publish`).
   */
  async announce(
    tx: SqlTransaction,
    jobs: JobRow[],
    now: Date,
    leased = false,
  ): Promise<NewOutboxRow[]> {
    const rows = jobs
      .map((j) => jobFinishedOutboxRow(j, now, leased))
      .filter((e): e is NewOutboxRow => e !== null);
    if (rows.length) await tx.query(this.outbox.store.insertStatement(rows, now));
    return rows;
  }

  /** After the commit: outbox rows written leased to this writer, published now (never throws). */
  publish(rows: NewOutboxRow[]): void {
    if (rows.length) void this.outbox.publishNow(rows);
  }

  /**
   * `announce` for jobs known by id, read in chunks (their rows are locked by the transition's
   * UPDATE until the commit: what is read is what it wrote).
   */
  async announceIds(tx: Tx, ids: string[], now: Date): Promise<boolean> {
    const statements: SqlTransaction = {
      query: (statement) => tx.$queryRawUnsafe(statement.text, ...statement.values),
    };
    let announced = false;
    for (let i = 0; i < ids.length; i += OUTBOX_CHUNK) {
      const jobs = await tx.job.findMany({ where: { id: { in: ids.slice(i, i + OUTBOX_CHUNK) } } });
      announced = (await this.announce(statements, jobs, now)).length > 0 || announced;
    }
    return announced;
  }

  /**
   * After the commit: the metrics of the jobs that became final, and the relay kicked if announced.
   * (Their waiters are woken by `ended`, or with the final state by `finishedByWorker`.)
   */
  finished(
    status: FinalStatus,
    jobs: Array<{ startedAt: Date | string | null }>,
    now: Date,
    announced: boolean,
  ): void {
    if (jobs.length) this.metrics.finished(status, jobs, now);
    if (announced) this.outbox.kick();
  }

  /** A worker's result made the job final: its waiters get the final state without reading it. */
  finishedByWorker(job: { endpointId: string; id: string }): void {
    this.changes.changed(job.endpointId, job.id, { final: job });
  }

  /**
   * Moves up to `BULK_LIMIT` jobs matching `where` (over the `Job` table, unaliased) to CANCELLED
   * or TIMED_OUT, records a stop for the worker of each running one and its events, in one
   * statement; then the after-effects.
   */
  async finalizeWhere(
    where: Prisma.Sql,
    status: 'CANCELLED' | 'TIMED_OUT',
    reason: StopReason,
    now: Date,
  ): Promise<ChangedJob[]> {
    const { job, stop, event, jobStatus } = this.t.sql;
    const { rows, announced } = await this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<
        Array<ChangedJob & { hooked: boolean; startedAt: Date | null }>
      >(Prisma.sql`
      WITH finalized AS (
        UPDATE ${job} SET status = ${status}::${jobStatus}, "completedAt" = ${at(now)}::timestamp(3),
          "resultsExpireAt" = ${at(now)}::timestamp(3) + ${RESULT_RETENTION_SQL}, "timeoutAt" = NULL, output = NULL
        WHERE id = ANY(ARRAY(SELECT id FROM ${job} WHERE ${where} LIMIT ${BULK_LIMIT} FOR UPDATE SKIP LOCKED)) AND ${where}
        RETURNING id, "endpointId", "workerId", "startedAt", webhook IS NOT NULL AS hooked
      ), stops AS (
        INSERT INTO ${stop} ("jobId", "workerId", "endpointId", reason, "createdAt")
        SELECT id, "workerId", "endpointId", ${reason}, ${at(now)}::timestamp(3) FROM finalized WHERE "workerId" IS NOT NULL
        ON CONFLICT ("jobId", "workerId") DO UPDATE SET reason = EXCLUDED.reason, "createdAt" = EXCLUDED."createdAt", "deliveredAt" = NULL
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId", detail)
        SELECT f.id, ${at(now)}::timestamp(3), e.type, f."workerId", e.detail
        FROM finalized f, LATERAL (VALUES (0, 'STOP_SENT', ${reason}::text), (1, ${status}::text, NULL)) AS e(n, type, detail)
        WHERE e.n = 1 OR f."workerId" IS NOT NULL
        ORDER BY f.id, e.n
      )
      SELECT id, "endpointId", "workerId", "startedAt", hooked FROM finalized`);
      const hooked = rows.filter((r) => r.hooked).map((r) => r.id);
      return { rows, announced: await this.announceIds(tx, hooked, now) };
    }, BULK_TX);
    this.finished(status, rows, now, announced);
    const changed = rows.map(({ id, endpointId, workerId }) => ({ id, endpointId, workerId }));
    this.ended(changed);
    return changed;
  }
}
