/** A job's states, as RunPod names them (the state machine: docs/architecture.md). */
export const JOB_STATUSES = [
  'IN_QUEUE',
  'IN_PROGRESS',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMED_OUT',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const FINAL_JOB_STATUSES: readonly JobStatus[] = [
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMED_OUT',
];

export function isFinalStatus(status: JobStatus): boolean {
  return FINAL_JOB_STATUSES.includes(status);
}
