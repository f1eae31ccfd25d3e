import { hostname } from 'node:os';
import type { Handler, Job, JobContext, JobDoneBody } from './types.js';
import { SDK_VERSION } from './version.js';

export interface RunJobOptions {
  returnAggregateStream: boolean;
  /** Posts one stream chunk; awaited before the next item is pulled, so chunks keep their order. */
  emit(chunk: { output: unknown }): Promise<void>;
  /** `RUNPOD_POD_HOSTNAME` / worker id for error reports. */
  host: { hostname?: string; workerId: string };
}

/** What to post to job-done; null when the job was stopped (nothing is posted for it). */
export interface JobOutcome {
  body: JobDoneBody;
  /** True for a streaming handler's final post. */
  isStream: boolean;
}

class Stopped extends Error {}

/**
 * Runs the handler for one job and turns what it did into the job-done body exactly as
 * runpod-python does. Never throws: handler errors become `{error}`.
 */
export async function runJob(
  handler: Handler,
  job: Job,
  context: JobContext,
  options: RunJobOptions,
): Promise<JobOutcome | null> {
  try {
    let result = handler(job, context);
    if (!isStreamable(result)) result = await untilStopped(Promise.resolve(result), context.signal);
    if (isStreamable(result)) return await stream(result, context.signal, options);
    return { body: shapeResult(result), isStream: false };
  } catch (err) {
    if (err instanceof Stopped || context.signal.aborted) return null;
    return { body: { error: describeException(err, options.host) }, isStream: false };
  }
}

/**
 * A returned value → job-done body: a plain object has `error` and `refresh_worker` taken out
 * (→ `error`, `stopPod`) and the rest is the output, dropped when empty; anything else is the output.
 */
export function shapeResult(value: unknown): JobDoneBody {
  if (!isPlainObject(value)) return { output: value === undefined ? null : value };
  const { error, refresh_worker: refreshWorker, ...rest } = value;
  const body: JobDoneBody = {};
  if (Object.keys(rest).length > 0) body.output = rest;
  if (error) body.error = errorText(error);
  if (refreshWorker) body.stopPod = true;
  return body;
}

/**
 * Streaming: each item goes to job-stream as `{output: item}`. An item with a truthy `error`, or a
 * throw, ends the stream and fails the job. Final body `{output: []}` (or all items with
 * `returnAggregateStream`), posted with `isStream=true`.
 */
async function stream(
  items: AsyncIterable<unknown> | Iterable<unknown>,
  signal: AbortSignal,
  options: RunJobOptions,
): Promise<JobOutcome | null> {
  const iterator =
    Symbol.asyncIterator in items
      ? items[Symbol.asyncIterator]()
      : (items as Iterable<unknown>)[Symbol.iterator]();
  const aggregate: unknown[] = [];
  let finished = false;
  try {
    for (;;) {
      const next = await untilStopped(Promise.resolve(iterator.next()), signal);
      if (next.done) {
        finished = true;
        break;
      }
      const item = next.value;
      if (isPlainObject(item) && item.error)
        return { body: { error: errorText(item.error) }, isStream: true };
      if (options.returnAggregateStream) aggregate.push(item);
      await options.emit({ output: item });
      if (signal.aborted) return null;
    }
  } catch (err) {
    if (err instanceof Stopped || signal.aborted) return null;
    const e = err instanceof Error ? err : new Error(String(err));
    finished = true;
    return {
      body: { error: `handler: ${e.message} \ntraceback: ${e.stack ?? ''}` },
      isStream: true,
    };
  } finally {
    // Stopped or ended early: let the generator run its finally blocks.
    if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
  return { body: { output: aggregate }, isStream: true };
}

/**
 * A thrown error, as runpod-python reports it: a JSON string of error_type, error_message,
 * error_traceback, hostname, worker_id and runpod_version (so `/status` `error` stays a string).
 */
export function describeException(err: unknown, host: RunJobOptions['host']): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return JSON.stringify({
    error_type: e.name,
    error_message: e.message,
    error_traceback: e.stack ?? `${e.name}: ${e.message}`,
    hostname: host.hostname || hostname(),
    worker_id: host.workerId,
    runpod_version: SDK_VERSION,
  });
}

/** The protocol allows any JSON as `error`, but clients (Go SDK) expect a string. */
function errorText(error: unknown): string {
  return typeof error === 'string' ? error : JSON.stringify(error);
}

export function isStreamable(value: unknown): value is AsyncIterable<unknown> | Generator<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  // Arrays and strings are outputs, not streams: only async iterables and generator objects stream.
  return (
    Symbol.asyncIterator in value || Object.prototype.toString.call(value) === '[object Generator]'
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Resolves like `promise`, or rejects with Stopped as soon as the job is stopped. */
function untilStopped<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Stopped());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Stopped());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
