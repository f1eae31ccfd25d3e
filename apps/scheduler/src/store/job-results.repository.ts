import { Injectable } from '@nestjs/common';
import { DirectSql, GroupCommit } from '@runplane/database';
import { Prisma } from '../generated/prisma/client.js';
import { SchedulerTables } from './scheduler-tables.js';
import { JobEffects } from './job-effects.js';
import {
  at,
  jobStateColumns,
  jsonParam,
  type JobRow,
  type JobState,
  type WorkerResult,
  PLANNED_ONCE,
} from './job-rows.js';
import { heldLiveSql, RESULT_RETENTION_SQL } from './job-rules.js';

/** A worker's final result for a job it holds, waiting for its batch (`finish`). */
interface WorkerFinish {
  endpointId: string;
  workerId: string;
  id: string;
  result: WorkerResult;
  now: Date;
}

/**
 * A worker's final result for a job it holds: the job becomes COMPLETED or FAILED. Results are
 * finished in batches (group commit), those of jobs without webhook in one statement, those with
 * one in one transaction that also writes their `job.finished` outbox rows.
 */
@Injectable()
export class JobResultsRepository {
  private readonly plainFinishes = new GroupCommit<WorkerFinish, JobState | null>((items) =>
    this.finishPlainBatch(items),
  );
  private readonly hookedFinishes = new GroupCommit<WorkerFinish, JobState | null>((items) =>
    this.finishHookedBatch(items),
  );

  constructor(
    private readonly direct: DirectSql,
    private readonly t: SchedulerTables,
    private readonly effects: JobEffects,
  ) {}

  /**
   * A worker's final result for a live job it holds: the job becomes COMPLETED or FAILED, and the
   * worker gets its "last busy" time. Most jobs have no webhook: one statement; a job with one
   * also gets its `job.finished` outbox row in the same transaction (the event exists exactly when
   * the final state does). A job this replica handed out with a webhook goes straight to that
   * batch; any other tries the plain one first. Null when the job is not held by this worker or
   * gone.
   */
  async finish(
    endpointId: string,
    workerId: string,
    id: string,
    result: WorkerResult,
    now: Date,
  ): Promise<JobState | null> {
    const item = { endpointId, workerId, id, result, now };
    if (this.effects.handedWithWebhook(id)) return this.hookedFinishes.call(item);
    return (await this.plainFinishes.call(item)) ?? (await this.hookedFinishes.call(item));
  }

  private async finishPlainBatch(items: WorkerFinish[]): Promise<Array<JobState | null>> {
    const { batch, now, answer } = firstPerJob(items);
    const rows = await this.direct.query<JobState>(this.finishStatement(batch, now, false));
    this.afterFinish(rows, now);
    return answer(rows);
  }

  private async finishHookedBatch(items: WorkerFinish[]): Promise<Array<JobState | null>> {
    const { batch, now, answer } = firstPerJob(items);
    const { rows, announced } = await this.direct.transaction(async (tx) => {
      const finished = await tx.query<JobRow>(this.finishStatement(batch, now, true));
      return { rows: finished, announced: await this.effects.announce(tx, finished, now, true) };
    });
    const states = rows.map(({ input: _input, s3Config: _s3, policy: _policy, ...state }) => state);
    this.effects.publish(announced);
    this.afterFinish(states, now);
    return answer(states);
  }

  /**
   * The final state of the jobs of `batch` that this worker holds, alive, with a webhook or
   * without one (`hooked`), the workers' "last busy" time and the history rows; returns the jobs'
   * columns (the whole row for hooked jobs: their webhook body is built from it).
   */
  private finishStatement(batch: WorkerFinish[], now: Date, hooked: boolean): Prisma.Sql {
    const { job, worker, event, jobStatus } = this.t.sql;
    return Prisma.sql`${PLANNED_ONCE}
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
        WHERE j.id = r.id AND ${heldLiveSql('j', Prisma.raw('r."endpointId"'), Prisma.raw('r."workerId"'), now)}
          AND j.webhook IS ${hooked ? Prisma.raw('NOT NULL') : Prisma.raw('NULL')}
        RETURNING ${jobStateColumns('j')}${hooked ? Prisma.raw(', j.input, j."s3Config", j.policy') : Prisma.empty}
      ), busy AS (
        UPDATE ${worker} w SET "lastBusyAt" = ${at(now)}::timestamp(3)
        FROM (SELECT DISTINCT "endpointId", "workerId" FROM finished) f WHERE w."endpointId" = f."endpointId" AND w.id = f."workerId"
      ), events AS (
        INSERT INTO ${event} ("jobId", at, type, "workerId") SELECT id, ${at(now)}::timestamp(3), status::text, "workerId" FROM finished
      )
      SELECT * FROM finished`;
  }

  private afterFinish(rows: JobState[], now: Date): void {
    for (const status of ['COMPLETED', 'FAILED'] as const)
      this.effects.finished(
        status,
        rows.filter((r) => r.status === status),
        now,
        false, // the outbox rows of these jobs are published by this writer (`publish`)
      );
    for (const row of rows) this.effects.finishedByWorker(row);
  }
}

/**
 * A batch's calls, one per job: two posts for one job in one batch, only the first may finish it
 * (the later one is a repeat). `answer` maps the finished rows back to every call, in order.
 */
function firstPerJob(items: WorkerFinish[]) {
  const first = new Map<string, WorkerFinish>();
  for (const item of items) if (!first.has(item.id)) first.set(item.id, item);
  return {
    batch: [...first.values()],
    now: items[items.length - 1].now,
    answer: (rows: JobState[]): Array<JobState | null> => {
      const finished = new Map(rows.map((r) => [r.id, r]));
      return items.map((item) =>
        first.get(item.id) === item ? (finished.get(item.id) ?? null) : null,
      );
    },
  };
}
