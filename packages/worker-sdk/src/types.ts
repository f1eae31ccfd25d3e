import type { Logger } from './logger.js';

/**
 * A job exactly as job-take delivered it: `{id, input}` plus `webhook`, `s3Config`, `policy` when
 * the request had them. Unknown keys are kept.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export interface Job<TInput = Record<string, any>> {
  id: string;
  input: TInput;
  webhook?: string;
  s3Config?: Record<string, unknown>;
  policy?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What a handler gets besides the job. */
export interface JobContext {
  /** This worker's id (`RUNPOD_POD_ID`). */
  readonly workerId: string;
  /**
   * Aborted when the server stops the job (cancelled, timed out, expired — delivered on job-stop)
   * or, in local test mode, never. Nothing is posted for a stopped job, so a handler may just return;
   * pass the signal to `fetch` and friends to stop work early.
   */
  readonly signal: AbortSignal;
  /**
   * Progress update (runpod-python `progress_update`): the job shows `IN_PROGRESS` with `output` =
   * `value` in `/status` until it finishes. Resolves once posted; the final result is always posted
   * after the progress updates that came before it.
   */
  progress(value: unknown): Promise<void>;
  /** Logs with the job id attached. */
  readonly log: Logger;
}

/**
 * What a handler may return (as runpod-python):
 * - any JSON value → the job's `output`;
 * - an object with a truthy `error` → the job FAILED with that error (other keys stay as output);
 *   `refresh_worker: true` asks the server to stop this worker afterwards (`stopPod`);
 * - an async iterable (e.g. an `async function*`) or a generator → each item is streamed
 *   (`/stream`), and the final output is `[]`, or the list of items with `returnAggregateStream`;
 * - a promise of any of these.
 * A thrown error makes the job FAILED with a string describing it.
 */
export type HandlerResult = unknown;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export type Handler<TInput = Record<string, any>> = (
  job: Job<TInput>,
  context: JobContext,
) => HandlerResult;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export interface WorkerOptions<TInput = Record<string, any>> {
  handler: Handler<TInput>;
  /**
   * Jobs run at once (default 1). A function is asked before every take with the current value,
   * like runpod-python's `concurrency_modifier`. Above 1 the worker takes jobs in batches.
   */
  concurrency?: number | ((current: number) => number);
  /**
   * While fewer than half the slots are free, how long (ms) a freed slot waits for more to free
   * before the next take, so that one take fetches several jobs (default 2; 0 takes at once).
   * A worker with half its slots free or more, or none busy, takes at once.
   */
  takeGatherMs?: number;
  /** Final output of a streaming handler: every streamed item (true) or `[]` (false, default). */
  returnAggregateStream?: boolean;
  /** Ask the server to replace this worker after each job (`stopPod`), and exit after it. */
  refreshWorker?: boolean;
  /** Environment to read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Where the SDK logs (default: stderr, JSON lines when `RUNPOD_ENDPOINT_ID` is set). */
  logger?: Logger;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export interface StartOptions<TInput = Record<string, any>> extends WorkerOptions<TInput> {
  /** Command-line arguments (default `process.argv.slice(2)`); `--test_input '<json>'` selects local test mode. */
  argv?: string[];
  /** Directory searched for `test_input.json` in local test mode (default `process.cwd()`). */
  cwd?: string;
  /**
   * Exit the process when the worker is done (default true), with 0 after a graceful stop or a
   * successful local test, 1 otherwise. With false, `start()` resolves with that code instead.
   */
  exit?: boolean;
}

/** The job-done body. */
export interface JobDoneBody {
  output?: unknown;
  error?: string;
  status?: 'IN_PROGRESS';
  stopPod?: boolean;
}
