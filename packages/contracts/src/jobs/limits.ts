/** Constants of the spec's "Limits" and policy tables, in milliseconds unless named otherwise. */
export const JOB_LIMITS = {
  executionTimeout: { default: 600_000, min: 5_000, max: 7 * 24 * 3600_000 },
  ttl: { default: 86_400_000, min: 10_000, max: 7 * 24 * 3600_000 },
  runsyncWait: { default: 90_000, min: 1_000, max: 300_000 },
  streamWait: { default: 10_000, min: 1_000, max: 300_000 },
  resultRetention: { run: 30 * 60_000, runsync: 60_000 },
  payloadBytes: { run: 10 * 1024 * 1024, runsync: 20 * 1024 * 1024 },
  streamChunkBytes: 1024 * 1024,
} as const;
