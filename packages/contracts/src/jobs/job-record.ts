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

/** What `/run` returns. */
export interface JobAccepted {
  id: string;
  status: JobStatus;
}
