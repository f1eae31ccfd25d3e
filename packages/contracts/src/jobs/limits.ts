/** Job limits and policy bounds (docs/limits.md), in milliseconds unless named otherwise. */
export const JOB_LIMITS = {
  executionTimeout: { default: 600_000, min: 5_000, max: 7 * 24 * 3600_000 },
  ttl: { default: 86_400_000, min: 10_000, max: 7 * 24 * 3600_000 },
  runsyncWait: { default: 90_000, min: 1_000, max: 300_000 },
  streamWait: { default: 10_000, min: 1_000, max: 300_000 },
  resultRetention: { run: 30 * 60_000, runsync: 60_000 },
  payloadBytes: { run: 10 * 1024 * 1024, runsync: 20 * 1024 * 1024 },
  streamChunkBytes: 1024 * 1024,
} as const;

/** Queue operations with their own limits: the key of QUEUE_RATE_LIMITS. */
export type LimitedQueueOperation =
  'runsync' | 'run' | 'status' | 'stream' | 'cancel' | 'purge-queue' | 'openai' | 'requests';

/**
 * The base limits per endpoint and operation: requests per 10-second window and requests
 * in flight at once (`null`: none). The effective limit is the higher of the base and
 * `running workers × requests_per_worker` (docs/limits.md).
 */
export const QUEUE_RATE_LIMITS: Readonly<
  Record<LimitedQueueOperation, { per10s: number; concurrent: number | null }>
> = {
  runsync: { per10s: 2000, concurrent: 400 },
  run: { per10s: 1000, concurrent: 200 },
  status: { per10s: 2000, concurrent: 400 },
  stream: { per10s: 2000, concurrent: 400 },
  cancel: { per10s: 100, concurrent: 20 },
  'purge-queue': { per10s: 2, concurrent: null },
  openai: { per10s: 2000, concurrent: 400 },
  requests: { per10s: 10, concurrent: 2 },
};

export const RATE_LIMIT_WINDOW_MS = 10_000;
