import { IsOptional, ValidateBy } from 'class-validator';

/**
 * What `GET /v1/endpoints/{id}/workers` says a worker is doing. IDLE and RUNNING: up, without or
 * with jobs. THROTTLED: RunPod's state for a worker waiting for hardware; Runplane's compute
 * providers either start a worker or refuse it, so it does not occur today (an endpoint held back
 * by its limits shows in `waiting`). EXITED: ended; kept a while as history (crash loops).
 */
export const ENDPOINT_WORKER_STATES = [
  'INITIALIZING',
  'IDLE',
  'RUNNING',
  'THROTTLED',
  'UNHEALTHY',
  'EXITED',
] as const;
export type EndpointWorkerState = (typeof ENDPOINT_WORKER_STATES)[number];

/** A worker of an endpoint (`GET /v1/endpoints/{id}/workers`). */
export interface EndpointWorker {
  id: string;
  /** Its Pod (managed workers, once pod-rest started it), else null. */
  podId: string | null;
  state: EndpointWorkerState;
  /** The endpoint version it runs. */
  version: number;
  /** Runs an older version than the endpoint's: replaced once it is free (a rolling release in progress). */
  isStale: boolean;
  /** Ids of the jobs it holds (IN_PROGRESS). */
  jobs: string[];
  /** When it was started (managed) or first called in (external), ISO 8601. */
  startedAt: string;
  /** Its last call (take, ping, result...), or null when it never called in. */
  lastSeenAt: string | null;
  /** When it ended, or null while it runs. */
  endedAt: string | null;
  /** Exit code of its process when it ended by itself, else null. */
  exitCode: number | null;
  /** Why it ended ("idle", "rolling release", "unhealthy: missed pings", "crashed: exit code 1", "start refused: ..."), else null. */
  reason: string | null;
}

/**
 * Why queued jobs wait. NO_WORKERS_ALLOWED: workersMax is 0. WORKERS_STARTING: workers were
 * started and have not called in yet. START_BACKOFF: workers failed to start or died young; the
 * next start waits (`nextAttemptAt`). START_REFUSED: the last start was refused (no permission to
 * run commands, an unknown secret, a template without a command); starts are retried with the same
 * back-off. GPUS_BUSY: a worker needs more GPUs than the machine has free now (the others are given
 * to running workloads); it starts when enough are freed. NOT_ENOUGH_GPUS: a worker needs more GPUs
 * than the machine has at all; it can never start (lower the endpoint's gpuCount). THROTTLED: the
 * endpoint runs as many workers as its workersMax allows and all are busy.
 */
export const WAITING_REASON_CODES = [
  'NO_WORKERS_ALLOWED',
  'WORKERS_STARTING',
  'START_BACKOFF',
  'START_REFUSED',
  'GPUS_BUSY',
  'NOT_ENOUGH_GPUS',
  'THROTTLED',
] as const;
export type WaitingReasonCode = (typeof WAITING_REASON_CODES)[number];

export interface WaitingReason {
  code: WaitingReasonCode;
  message: string;
  /** START_BACKOFF, START_REFUSED: failed starts in a row. */
  failures?: number;
  /** START_BACKOFF, START_REFUSED: when the next start is tried, ISO 8601. */
  nextAttemptAt?: string;
  /** START_BACKOFF, START_REFUSED: the last failed worker (its Pod id, for its logs). */
  workerId?: string;
  /** START_BACKOFF: exit code of the last failed worker, when it ended by itself. */
  exitCode?: number | null;
  /** START_BACKOFF, START_REFUSED: why the last failed worker ended. */
  reason?: string | null;
  /** START_BACKOFF: the last lines its process wrote, when pod-rest still has them. */
  logs?: string[];
  /** GPUS_BUSY, NOT_ENOUGH_GPUS: GPUs a worker needs (the endpoint's gpuCount). */
  gpusNeeded?: number;
  /** GPUS_BUSY, NOT_ENOUGH_GPUS: GPUs of the machine not given to a workload when last tried. */
  gpusFree?: number;
  /** GPUS_BUSY, NOT_ENOUGH_GPUS: GPUs of the machine. */
  gpusTotal?: number;
}

/** On an endpoint with queued jobs: how many, and why they wait. */
export interface EndpointWaiting {
  /** Jobs IN_QUEUE. */
  jobs: number;
  reasons: WaitingReason[];
}

const WINDOW = /^([1-9][0-9]{0,4})(m|h)$/;
/** The longest metrics window: jobs are deleted by their TTL (a day by default). */
export const MAX_METRICS_WINDOW_MS = 24 * 3_600_000;

/** `15m`, `1h`, `24h` in ms; null when not a window of 1 minute to 24 hours. */
export function metricsWindowMs(window: string): number | null {
  const m = WINDOW.exec(window);
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === 'm' ? 60_000 : 3_600_000);
  return ms <= MAX_METRICS_WINDOW_MS ? ms : null;
}

/** A metrics window such as `15m`, `1h` or `24h` (1 minute to 24 hours). */
export function IsMetricsWindow(): PropertyDecorator {
  return ValidateBy({
    name: 'isMetricsWindow',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && metricsWindowMs(value) !== null,
      defaultMessage: (args) =>
        `${args?.property} must be minutes or hours from 1m to 24h, such as 15m, 1h or 24h`,
    },
  });
}

/** Query of `GET /v1/endpoints/{id}/metrics`. */
export class EndpointMetricsQuery {
  /** How far back to look: `15m`, `1h` (default), `24h`... (1 minute to 24 hours). */
  @IsOptional() @IsMetricsWindow() window?: string;
}

/** Percentiles of a duration in ms (nearest rank: each is a value that occurred); null without samples. */
export interface DurationPercentiles {
  samples: number;
  p70: number | null;
  p90: number | null;
  p98: number | null;
}

/** `GET /v1/endpoints/{id}/metrics`: what the endpoint's jobs and workers did in the window. */
export interface EndpointMetrics {
  window: string;
  /** The window's start and end, ISO 8601. */
  from: string;
  to: string;
  /** Jobs that ended in the window, by final state; `retried`: those of them retried or requeued at least once. */
  jobs: { completed: number; failed: number; timedOut: number; retried: number };
  /** Queue wait (submission to start) of jobs started in the window. */
  delayTime: DurationPercentiles;
  /** Start to end of jobs that ended in the window. */
  executionTime: DurationPercentiles;
  /** A managed worker's start to its first call-in, for workers that called in in the window. */
  coldStart: DurationPercentiles;
}
