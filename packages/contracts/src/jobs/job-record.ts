import type { JobStatus } from './job-status.js';

/** What `/status` returns: RunPod's job record plus Runplane's additions. */
export interface JobRecord {
  id: string;
  status: JobStatus;
  /** Milliseconds between submission and the start of execution. */
  delayTime?: number;
  /** Milliseconds of execution. */
  executionTime?: number;
  output?: unknown;
  /** Set for FAILED jobs; always a string. */
  error?: string;
  retries?: number;
  workerId?: string;
}

/**
 * A job as its owner's operators see it (`GET /v1/endpoints/{id}/jobs/{jobId}`): the `/status`
 * record plus what the client sent. Not part of RunPod's API.
 */
export interface JobDetail extends JobRecord {
  /** The job's `input`, as submitted. */
  input: unknown;
  /** When it was submitted (ISO 8601). */
  createdAt: string;
  /** `run` or `runsync`: decides how long its result is kept. */
  mode: 'run' | 'runsync';
  /** Its webhook, when it has one. */
  webhook?: string;
}

/** What `/run` returns. */
export interface JobAccepted {
  id: string;
  status: JobStatus;
}
