import { Agent, request } from 'undici';
import { jobDoneUrl, jobStreamUrl, jobTakeUrl, pingUrl, type WorkerConfig } from './config.js';
import type { Logger } from './logger.js';
import type { Job, JobDoneBody } from './types.js';
import { SDK_VERSION, USER_AGENT } from './version.js';

/** runpod-python wraps each job-take / job-stop call in a 90 s timeout; the server holds them ≤ 60 s. */
const LONG_POLL_TIMEOUT_MS = 90_000;
/** aiohttp session total timeout of runpod-python. */
const POST_TIMEOUT_MS = 600_000;
/** A poll answered faster than this without work is treated as a server that does not long-poll. */
const QUICK_ANSWER_MS = 1000;
const RETRY_DELAYS_MS = [250, 500];

/**
 * The worker's connections: kept alive, one pool per server. The calls go through undici's
 * `request`, not `fetch`: fetch's WHATWG streams, Response objects and per-call composed abort
 * signals were most of a worker's CPU (about 0.8 ms per job with a no-op handler).
 */
const dispatcher = new Agent({ keepAliveTimeout: 30_000 });

/** A server's answer, read whole. */
interface Answer {
  status: number;
  /** The Content-Type header as sent (empty when absent). */
  contentType: string;
  text: string;
}

/**
 * One HTTP call. `timeoutMs` bounds the wait for the answer's headers and then for each part of
 * its body; `abort` (the worker's stop) ends it at once.
 */
async function call(
  url: string,
  options: {
    method?: 'GET' | 'POST';
    headers: Record<string, string>;
    body?: string;
    abort?: AbortSignal;
    timeoutMs: number;
  },
): Promise<Answer> {
  const res = await request(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    signal: options.abort,
    dispatcher,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const text = await res.body.text();
  const contentType = res.headers['content-type'];
  return {
    status: res.statusCode,
    contentType: (Array.isArray(contentType) ? contentType[0] : contentType) ?? '',
    text,
  };
}

const ok = (status: number) => status >= 200 && status <= 299;

export interface PollResult<T> {
  value: T;
  /** How long to wait before polling again (0: at once). */
  backoffMs: number;
}

/**
 * The worker's side of the HTTP protocol, transport only: what runs the
 * jobs lives in the worker. Every call is bounded by a timeout and abortable (graceful stop).
 */
export class WorkerTransport {
  private readonly session: Record<string, string>;

  constructor(
    private readonly config: WorkerConfig,
    private readonly logger: Logger,
  ) {
    // The raw key, as runpod-python sends it (no "Bearer").
    this.session = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      ...(config.apiKey ? { Authorization: config.apiKey } : {}),
    };
  }

  /**
   * Long-polls job-take (one job) or job-take-batch (`count` > 1). 204 and 400 mean no job, 429
   * backs off 5 s; a 200 that is not `application/json` is dropped, as runpod-python drops it.
   */
  async takeJobs(
    count: number,
    jobInProgress: boolean,
    abort: AbortSignal,
  ): Promise<PollResult<Job[]>> {
    const started = Date.now();
    const none = (backoffMs: number): PollResult<Job[]> => ({ value: [], backoffMs });
    const quickBackoff = () => (Date.now() - started < QUICK_ANSWER_MS ? QUICK_ANSWER_MS : 0);
    let res: Answer;
    try {
      res = await call(jobTakeUrl(this.config, count, jobInProgress), {
        headers: this.session,
        abort,
        timeoutMs: LONG_POLL_TIMEOUT_MS,
      });
    } catch (err) {
      if (!abort.aborted) this.logger.warn(`job-take failed: ${describe(err)}`);
      return none(1000);
    }
    if (res.status === 204 || res.status === 400) return none(quickBackoff());
    if (res.status === 429) return none(5000);
    if (!ok(res.status)) {
      this.logger.warn(`job-take answered HTTP ${res.status}`);
      return none(1000);
    }
    if (mediaType(res) !== 'application/json') {
      this.logger.warn(`job-take answered 200 with content-type "${res.contentType}": dropped`);
      return none(quickBackoff());
    }
    if (!res.text) return none(quickBackoff());
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      this.logger.warn('job-take answered invalid JSON');
      return none(1000);
    }
    const jobs = Array.isArray(body) ? body : [body];
    const valid = jobs.filter(
      (j): j is Job =>
        isObject(j) &&
        typeof j.id === 'string' &&
        j.id !== '' &&
        (Array.isArray(body) || 'input' in j),
    );
    if (valid.length < jobs.length)
      this.logger.warn(
        `job-take returned ${jobs.length - valid.length} item(s) without id/input: ignored`,
      );
    return { value: valid, backoffMs: valid.length ? 0 : quickBackoff() };
  }

  /** Long-polls job-stop: the ids of jobs this worker must abandon (`{"jobsToStop": [...]}`). */
  async pollStops(stopUrl: string, abort: AbortSignal): Promise<PollResult<string[]>> {
    const started = Date.now();
    const quickBackoff = () => (Date.now() - started < QUICK_ANSWER_MS ? QUICK_ANSWER_MS : 0);
    try {
      const res = await call(stopUrl, {
        headers: this.session,
        abort,
        timeoutMs: LONG_POLL_TIMEOUT_MS,
      });
      if (res.status === 204) return { value: [], backoffMs: quickBackoff() };
      if (res.status === 429) return { value: [], backoffMs: 5000 };
      if (!ok(res.status)) {
        this.logger.warn(`job-stop answered HTTP ${res.status}`);
        return { value: [], backoffMs: 1000 };
      }
      const body: unknown =
        mediaType(res) === 'application/json' && res.text ? JSON.parse(res.text) : undefined;
      const ids =
        isObject(body) && Array.isArray(body.jobsToStop)
          ? body.jobsToStop.filter((id): id is string => typeof id === 'string')
          : [];
      return { value: ids, backoffMs: ids.length ? 0 : quickBackoff() };
    } catch (err) {
      if (!abort.aborted) this.logger.warn(`job-stop failed: ${describe(err)}`);
      return { value: [], backoffMs: 1000 };
    }
  }

  /** A result, or a progress update (`{status: "IN_PROGRESS", output}`), to job-done. */
  postResult(jobId: string, body: JobDoneBody, isStream: boolean): Promise<void> {
    return this.post(jobDoneUrl(this.config, jobId, isStream), jobId, body, 'job-done');
  }

  /** One stream chunk (`{output}`) to job-stream. */
  postStream(jobId: string, body: { output: unknown }): Promise<void> {
    return this.post(jobStreamUrl(this.config, jobId), jobId, body, 'job-stream');
  }

  /** One heartbeat with the jobs in progress; the answer is ignored. */
  async ping(jobIds: string[], abort: AbortSignal): Promise<void> {
    const url = pingUrl(this.config, jobIds, SDK_VERSION);
    if (!url) return;
    try {
      const res = await call(url, {
        headers: {
          'User-Agent': USER_AGENT,
          ...(this.config.apiKey ? { Authorization: this.config.apiKey } : {}),
        },
        abort,
        timeoutMs: 2 * this.config.pingIntervalMs,
      });
      if (!ok(res.status)) this.logger.debug(`ping answered HTTP ${res.status}`);
    } catch (err) {
      if (!abort.aborted) this.logger.warn(`ping failed: ${describe(err)}`);
    }
  }

  /**
   * As runpod-python: the raw JSON text labelled `application/x-www-form-urlencoded`, with
   * `X-Request-ID: <job id>`; up to 3 attempts on 5xx and network errors (so the server must
   * accept duplicates), none on 4xx. Failures are logged, never thrown: the job is over either way.
   */
  private async post(
    url: string | undefined,
    jobId: string,
    body: unknown,
    what: string,
  ): Promise<void> {
    if (!url) {
      this.logger.error(`cannot post to ${what}: its RUNPOD_WEBHOOK_* URL is not set`, jobId);
      return;
    }
    const headers = {
      ...this.session,
      'Content-Type': 'application/x-www-form-urlencoded',
      charset: 'utf-8',
      'X-Request-ID': jobId,
    };
    const payload = JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      let retryable = true;
      try {
        const res = await call(url, {
          method: 'POST',
          headers,
          body: payload,
          timeoutMs: POST_TIMEOUT_MS,
        });
        if (ok(res.status)) return;
        failure = `HTTP ${res.status}`;
        retryable = res.status >= 500;
      } catch (err) {
        failure = describe(err);
      }
      if (!retryable || attempt > RETRY_DELAYS_MS.length) {
        this.logger.error(`${what} post failed: ${failure}`, jobId);
        return;
      }
      await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt - 1]));
    }
  }
}

function mediaType(res: Answer): string {
  return res.contentType.split(';')[0].trim().toLowerCase();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(err: unknown): string {
  const e = err as {
    code?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT')
    return 'timed out';
  return e?.code ?? e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}
