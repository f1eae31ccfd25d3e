import { JOB_LIMITS } from '@runplane/contracts';
import { Prisma } from '../generated/prisma/client.js';
import { at } from './job-rows.js';

/**
 * The rules of the job state machine, defined once: as functions for TypeScript and as SQL
 * fragments for the statements that apply them.
 */

/**
 * Bulk transitions (sweeps, endpoint deletion) change at most this many jobs per statement, so
 * one transaction stays short; callers repeat while a batch comes back full.
 */
export const BULK_LIMIT = 1000;

/** Limits of the transactions that write bulk transitions and their webhook events. */
export const BULK_TX = { timeout: 60_000, maxWait: 30_000 };

/**
 * How long a final job keeps its output, over the row being finalised (its `mode` column), as an
 * interval: 30 min after `/run`, 1 min after `/runsync`.
 */
export const RESULT_RETENTION_SQL = Prisma.raw(
  `(CASE WHEN mode = 'runsync' THEN ${JOB_LIMITS.resultRetention.runsync} ELSE ${JOB_LIMITS.resultRetention.run} END) * interval '1 millisecond'`,
);

/** A worker on its way out (stopping, stopped, or it asked to be replaced) gets no new job. */
export function isWorkerLeaving(worker: { state: string; stopRequested: boolean }): boolean {
  return worker.state === 'stopping' || worker.state === 'stopped' || worker.stopRequested;
}

/** `isWorkerLeaving` over the `Worker` row aliased `alias`. */
export function workerLeavingSql(alias: string): Prisma.Sql {
  return Prisma.raw(`(${alias}.state IN ('stopping', 'stopped') OR ${alias}."stopRequested")`);
}

/**
 * The job is alive at `now`: not a TTL tombstone and not expired yet (the negation of `isGone`).
 * Over the `Job` row aliased `alias`, or unqualified columns when there is none.
 */
export function aliveSql(now: Date, alias?: string): Prisma.Sql {
  const a = Prisma.raw(alias ? `${alias}.` : '');
  return Prisma.sql`${a}"deletedAt" IS NULL AND ${a}"expiresAt" > ${at(now)}::timestamp(3)`;
}

/** Running on this worker. Over the `Job` row aliased `alias`. */
function runningOnSql(alias: string, endpointId: unknown, workerId: unknown): Prisma.Sql {
  const a = Prisma.raw(alias);
  return Prisma.sql`${a}."endpointId" = ${endpointId} AND ${a}."workerId" = ${workerId} AND ${a}.status = 'IN_PROGRESS'`;
}

/**
 * The job is running on this worker and not a TTL tombstone: only then may the worker report
 * progress, stream or finish it (for statements whose caller read the job, and so its expiry,
 * first). Over the `Job` row aliased `alias`.
 */
export function heldBySql(alias: string, endpointId: unknown, workerId: unknown): Prisma.Sql {
  return Prisma.sql`${runningOnSql(alias, endpointId, workerId)} AND ${Prisma.raw(alias)}."deletedAt" IS NULL`;
}

/**
 * `heldBySql` and alive at `now` (not expired either): for the statements that take a worker's
 * post without reading the job first (results, stream chunks, a lost worker's jobs).
 */
export function heldLiveSql(
  alias: string,
  endpointId: unknown,
  workerId: unknown,
  now: Date,
): Prisma.Sql {
  return Prisma.sql`${runningOnSql(alias, endpointId, workerId)} AND ${aliveSql(now, alias)}`;
}
