import { GENERIC_PLAN_HINT } from '@runplane/database';
import { Prisma, type Job } from '../generated/prisma/client.js';

/**
 * Starts the statements of the transitions every job goes through (insert, claim, finish): the
 * embedded database plans them once instead of at every call (see GENERIC_PLAN_HINT). They run
 * through `DirectSql`, without Prisma's per-call work.
 */
export const PLANNED_ONCE = Prisma.raw(GENERIC_PLAN_HINT);

/** The shapes of job rows the scheduler reads and writes (one home, imported by every job file). */
export type JobRow = Job;

/** A job's state without the request's payload (input, s3Config, policy): what status reads need. */
export type JobState = Omit<Job, 'input' | 's3Config' | 'policy'>;

/** The payload columns `JobState` reads leave out (an input can be 20 MB; every status poll reads the row). */
export const WITHOUT_PAYLOAD = { input: true, s3Config: true, policy: true } as const;

/** The columns of a `JobState`, for raw statements that return one (`RETURNING`). */
const JOB_STATE_COLUMN_NAMES = [
  'id',
  'endpointId',
  'ownerId',
  'status',
  'mode',
  'webhook',
  'lowPriority',
  'executionTimeoutMs',
  'ttlMs',
  'output',
  'error',
  'retries',
  'workerId',
  'createdAt',
  'queuedAt',
  'startedAt',
  'timeoutAt',
  'completedAt',
  'resultsExpireAt',
  'expiresAt',
  'deletedAt',
  'streamSeq',
  'attempts',
] as const satisfies ReadonlyArray<keyof JobState>;

/** `RETURNING` list of a `JobState` for the table aliased `alias`. */
export function jobStateColumns(alias: string): Prisma.Sql {
  return Prisma.raw(JOB_STATE_COLUMN_NAMES.map((c) => `${alias}."${c}"`).join(', '));
}

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
  /** Normal-priority queued jobs, counted up to the limit asked for. */
  queued: number;
  running: number;
  /** queuedAt of the oldest normal-priority queued job (see JobQueriesRepository.queueStats). */
  oldestQueuedAt: Date | null;
}

/** What a requeue of a lost worker's jobs did: jobs back in the queue, and jobs that used up their attempts (FAILED). */
export interface Requeued {
  requeued: ChangedJob[];
  failed: ChangedJob[];
}

/** A worker's final result as the statements store it. */
export interface WorkerResult {
  status: 'COMPLETED' | 'FAILED';
  output?: unknown;
  error?: string;
}

/** Why a worker is told to drop a job (the job-stop channel's `reason`). */
export type StopReason =
  'cancelled' | 'timed-out' | 'expired' | 'requeued' | 'endpoint-deleted' | 'not-held';

/** The row `insert` writes for a new job (every column set, so no read-back is needed). */
export function newJobRow(job: NewJob, now: Date): JobRow {
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

/**
 * A time as a statement parameter: an ISO string cast to `timestamp(3)` in the SQL, the way Prisma
 * stores DateTime (UTC wall-clock), whatever the driver or the server's time zone.
 */
export const at = (d: Date) => d.toISOString();

/** A value for a `::json` parameter of a raw statement: null and undefined leave the column empty (SQL NULL). */
export const jsonParam = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/**
 * A batch's JSON values as one `::json` array parameter, for `json_array_elements` beside the
 * batch's `unnest`: one native stringify, where a `text[]` of JSON texts is escaped and joined
 * element by element in JavaScript and unescaped and parsed again by Postgres — for chat-sized
 * inputs most of a job insert's cost. Every value must be present (`null` would be JSON null).
 */
export const jsonList = (values: unknown[]) => JSON.stringify(values);
