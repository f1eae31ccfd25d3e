import { RunplaneError } from '@runplane/contracts';

/** A worker route's addressing once RunPod's URL quirks are undone. */
export interface WorkerCall {
  workerId: string;
  jobId?: string;
  /** Query parameters (first value of each), including those glued to the last path segment. */
  query: Record<string, string>;
}

export interface RawWorkerCall {
  /** The request URL as received (path and query). */
  url: string;
  params: { workerId: string; jobId?: string };
  query: Record<string, unknown> | undefined;
  /** `X-Request-ID`: runpod-python sends the job id in it with every result post. */
  requestId?: string | string[];
}

const JOB_PLACEHOLDER = '$ID';

/**
 * RunPod's worker SDK builds URLs by string substitution and appends `&name=value` whatever the
 * template looked like, so be lenient: without a `?` in the URL, everything after
 * the first `&` of the last path segment is query; a missing job segment or a literal `$ID` takes
 * the job id from `X-Request-ID`.
 */
export function resolveWorkerCall(raw: RawWorkerCall, needsJob: boolean): WorkerCall {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw.query ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') query[name] = first;
  }
  let { workerId, jobId } = raw.params;
  if (!raw.url.includes('?')) {
    const split = (segment: string): string => {
      const at = segment.indexOf('&');
      if (at < 0) return segment;
      for (const [name, value] of new URLSearchParams(segment.slice(at + 1))) query[name] ??= value;
      return segment.slice(0, at);
    };
    if (jobId !== undefined) jobId = split(jobId);
    else workerId = split(workerId);
  }
  if (!workerId)
    throw RunplaneError.badRequest('the worker id is missing from the URL', [
      { path: 'workerId', message: 'required' },
    ]);
  if (!needsJob) return { workerId, query };
  if (!jobId || jobId === JOB_PLACEHOLDER) {
    const header = Array.isArray(raw.requestId) ? raw.requestId[0] : raw.requestId;
    jobId = header?.trim() || undefined;
  }
  if (!jobId) {
    throw RunplaneError.badRequest(
      'the job id is missing: put it in the URL (/job-done/{workerId}/{jobId}) or send X-Request-ID',
      [{ path: 'jobId', message: 'required' }],
    );
  }
  return { workerId, jobId, query };
}

/** `true`/`1`/`yes` (any case) is true; anything else, or nothing, is false. */
export function queryFlag(value: string | undefined): boolean {
  return /^(true|1|yes)$/i.test(value?.trim() ?? '');
}

/** An integer query value clamped to [min, max]; `fallback` when absent or not a number. */
export function queryInt(
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
}

/** `job_id=a,b` (comma-separated, possibly empty) as a list of ids. */
export function queryList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
