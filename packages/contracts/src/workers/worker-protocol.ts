/**
 * The job a worker receives from job-take: `{id, input}` plus `webhook`, `s3Config`
 * and `policy` when the request had them.
 */
export interface WorkerJob {
  id: string;
  input: Record<string, unknown>;
  webhook?: string;
  s3Config?: Record<string, unknown>;
  policy?: Record<string, unknown>;
}

/**
 * Body of job-done as the RunPod worker SDK posts it: `{output}`, `{error}`,
 * `{output, error}`, progress `{status: "IN_PROGRESS", output}`, plus `stopPod`.
 */
export interface JobDoneBody {
  output?: unknown;
  error?: unknown;
  status?: string;
  stopPod?: boolean;
}

/** Ping interval given to managed workers (RUNPOD_PING_INTERVAL, ms); 3 missed = unhealthy. */
export const DEFAULT_PING_INTERVAL_MS = 10_000;
/** How long job-take and job-stop hold an empty poll (up to 30 s, never over 60 s). */
export const WORKER_LONG_POLL_MS = 30_000;
