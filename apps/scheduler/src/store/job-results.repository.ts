import { Injectable } from '@nestjs/common';
import { DirectSql, GroupCommit } from '@runplane/database';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';
import { JobEffects } from './job-effects.js';
import {
  at,
  jobStateColumns,
  jsonParam,
  toOptionalJson,
  WITHOUT_PAYLOAD,
  type JobRow,
  type JobState,
  type WorkerResult,
  PLANNED_ONCE,
} from './job-rows.js';
import {
  BULK_TX,
  heldBySql,
  heldByWhere,
  RESULT_RETENTION_SQL,
  resultRetentionMs,
} from './job-rules.js';

/** A result without webhook, finished in one statement (`finishPlain`). */
interface PlainFinish {
  endpointId: string;
  workerId: string;
  id: string;
  result: WorkerResult;
  now: Date;
}

/** A worker's final result for a job it holds: the job becomes COMPLETED or FAILED. */
@Injectable()
export class JobResultsRepository {
  private readonly plainFinishes = new GroupCommit<PlainFinish, JobState | null>((items) =>
    this.finishPlainBatch(items),
  );

  constructor(
    private readonly db: PrismaClient,
    private readonly direct: DirectSql,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
  ) {}

  /**
   * The final result; only the first one for the worker holding the job counts, and with it the
   * job's webhook event. Returns the finished job, or null.
   */
  async finish(
    job: Pick<JobState, 'id' | 'endpointId' | 'mode' | 'webhook'>,
    workerId: string,
    result: WorkerResult,
    now: Date,
  ): Promise<JobState | null> {
    const hasWebhook = job.webhook !== null;
    const data = {
      status: result.status,
      output: toOptionalJson(result.output),
      error: result.error ?? null,
      completedAt: now,
      timeoutAt: null,
      resultsExpireAt: new Date(now.getTime() + resultRetentionMs(job.mode)),
    };
    const finished = await this.db.$transaction(async (tx) => {
      const [row] = await tx.job.updateManyAndReturn({
        where: heldByWhere(job.endpointId, workerId, job.id),
        data,
        // A job's webhook is fixed at submission: without one there is nothing to announce.
        ...(hasWebhook ? {} : { omit: WITHOUT_PAYLOAD }),
      });
      if (!row) return null;
      await tx.jobEvent.create({ data: { jobId: job.id, at: now, type: result.status, workerId } });
      const announced = hasWebhook && (await this.effects.announce(tx, [row as JobRow], now));
      return { row, announced };
    }, BULK_TX);
    if (!finished) return null;
    this.effects.finished(result.status, [finished.row], now, finished.announced);
    const { input: _input, s3Config: _s3, policy: _policy, ...state } = finished.row as JobRow;
    this.effects.finishedByWorker(state);
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
    result: WorkerResult,
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
    const { job, worker, event, jobStatus } = this.t.sql;
    const rows = await this.direct.query<JobState>(Prisma.sql`${PLANNED_ONCE}
      WITH results AS (
        SELECT * FROM unnest(
          ${batch.map((b) => b.id)}::text[], ${batch.map((b) => b.endpointId)}::text[], ${batch.map((b) => b.workerId)}::text[],
          ${batch.map((b) => b.result.status)}::text[], ${batch.map((b) => jsonParam(b.result.output))}::text[],
          ${batch.map((b) => b.result.error ?? null)}::text[]
        ) AS r(id, "endpointId", "workerId", status, output, error)
      ), finished AS (
        UPDATE ${job} j SET status = r.status::${jobStatus}, output = r.output::json, error = r.error, "completedAt" = ${at(now)}::timestamp(3),
          "timeoutAt" = NULL, "resultsExpireAt" = ${at(now)}::timestamp(3) + ${RESULT_RETENTION_SQL}
        FROM results r
        WHERE j.id = r.id AND ${heldBySql('j', Prisma.raw('r."endpointId"'), Prisma.raw('r."workerId"'))}
          AND j."expiresAt" > ${at(now)}::timestamp(3) AND j.webhook IS NULL
        RETURNING ${jobStateColumns('j')}
      ), busy AS (
        UPDATE ${worker} w SET "lastBusyAt" = ${at(now)}::timestamp(3)
        FROM (SELECT DISTINCT "endpointId", "workerId" FROM finished) f WHERE w."endpointId" = f."endpointId" AND w.id = f."workerId"
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId") SELECT id, ${at(now)}::timestamp(3), status::text, "workerId" FROM finished
      )
      SELECT * FROM finished`);
    const finished = new Map(rows.map((r) => [r.id, r]));
    for (const status of ['COMPLETED', 'FAILED'] as const)
      this.effects.finished(
        status,
        rows.filter((r) => r.status === status),
        now,
        false,
      );
    for (const row of rows) this.effects.finishedByWorker(row);
    return items.map((item) =>
      first.get(item.id) === item ? (finished.get(item.id) ?? null) : null,
    );
  }
}
