import { randomUUID } from 'node:crypto';

/** Default ping interval of runpod-python (ms). */
export const DEFAULT_PING_INTERVAL_MS = 10_000;

/**
 * What a worker reads from its environment, with the URL templates prepared
 * exactly as runpod-python does:
 * - job-take: `$ID` → worker id (only `$ID`; a literal `$RUNPOD_POD_ID` is left alone);
 * - job-done / job-stream: `$RUNPOD_POD_ID` → worker id now, `$ID` → job id per request;
 * - ping: `$RUNPOD_POD_ID` → worker id;
 * - job-stop: the job-take URL with `/job-take/` → `/job-stop/` (none when it has no `/job-take/`).
 */
export interface WorkerConfig {
  workerId: string;
  /** `RUNPOD_AI_API_KEY`, sent raw as `Authorization` (never with `Bearer`). */
  apiKey: string;
  jobTakeUrl: string | undefined;
  jobDoneUrl: string | undefined;
  jobStreamUrl: string | undefined;
  jobStopUrl: string | undefined;
  /** Undefined when pings are off: they need a key, `RUNPOD_POD_ID` and a ping URL. */
  pingUrl: string | undefined;
  pingIntervalMs: number;
}

export function readWorkerConfig(env: Record<string, string | undefined>): WorkerConfig {
  const podId = env.RUNPOD_POD_ID ?? '';
  const workerId = podId || randomUUID();
  const apiKey = env.RUNPOD_AI_API_KEY ?? '';
  const withPodId = (url: string | undefined) =>
    url ? url.replaceAll('$RUNPOD_POD_ID', workerId) : undefined;
  const jobTakeUrl = env.RUNPOD_WEBHOOK_GET_JOB
    ? env.RUNPOD_WEBHOOK_GET_JOB.replaceAll('$ID', workerId)
    : undefined;
  const pingUrl = withPodId(env.RUNPOD_WEBHOOK_PING);
  return {
    workerId,
    apiKey,
    jobTakeUrl,
    jobDoneUrl: withPodId(env.RUNPOD_WEBHOOK_POST_OUTPUT),
    jobStreamUrl: withPodId(env.RUNPOD_WEBHOOK_POST_STREAM),
    jobStopUrl: jobTakeUrl?.includes('/job-take/')
      ? jobTakeUrl.replaceAll('/job-take/', '/job-stop/')
      : undefined,
    pingUrl: apiKey && podId ? pingUrl : undefined,
    pingIntervalMs: pingInterval(env.RUNPOD_PING_INTERVAL),
  };
}

/**
 * `RUNPOD_PING_INTERVAL` in ms. runpod-python truncates it to whole seconds (so values under
 * 1000 make it ping in a busy loop); here the milliseconds are kept, with a floor of 100 ms.
 */
function pingInterval(raw: string | undefined): number {
  const ms = Number.parseInt(raw ?? '', 10);
  return Number.isFinite(ms) && ms > 0 ? Math.max(100, ms) : DEFAULT_PING_INTERVAL_MS;
}

// Parameters are appended with "&", never "?": the templates carry their own query.

/** `job-take` for one job, `job-take-batch` with `batch_size` for more. */
export function jobTakeUrl(config: WorkerConfig, count: number, jobInProgress: boolean): string {
  let url = config.jobTakeUrl!;
  if (count > 1) url = url.replaceAll('/job-take/', '/job-take-batch/') + `&batch_size=${count}`;
  return `${url}&job_in_progress=${jobInProgress ? 1 : 0}`;
}

/** Results and progress go to job-done; `isStream` is true only for a streaming handler's final post. */
export function jobDoneUrl(
  config: WorkerConfig,
  jobId: string,
  isStream: boolean,
): string | undefined {
  return config.jobDoneUrl && `${config.jobDoneUrl.replaceAll('$ID', jobId)}&isStream=${isStream}`;
}

/** Stream chunks go to job-stream, always with `isStream=false` (as runpod-python sends them). */
export function jobStreamUrl(config: WorkerConfig, jobId: string): string | undefined {
  return config.jobStreamUrl && `${config.jobStreamUrl.replaceAll('$ID', jobId)}&isStream=false`;
}

/** `job_id` lists the jobs in progress (omitted when none), then `runpod_version`. */
export function pingUrl(
  config: WorkerConfig,
  jobIds: string[],
  version: string,
): string | undefined {
  if (!config.pingUrl) return undefined;
  const params = [
    ...(jobIds.length ? [`job_id=${encodeURIComponent(jobIds.join(','))}`] : []),
    `runpod_version=${encodeURIComponent(version)}`,
  ];
  // requests merges params into an existing query string, or starts one.
  return `${config.pingUrl}${config.pingUrl.includes('?') ? '&' : '?'}${params.join('&')}`;
}
