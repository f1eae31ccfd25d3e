/**
 * One line a Pod's workload (a serverless worker's too) wrote: `GET /v1/pods/{id}/logs` and the
 * endpoint log routes answer arrays of them, oldest first. Resolved secrets read `[secret]`.
 */
export interface WorkloadLogLine {
  /** When it was read from the workload (ISO 8601). */
  at: string;
  stream: 'stdout' | 'stderr';
  /** The line without its newline (a very long one comes in pieces of 16384 characters). */
  text: string;
}
