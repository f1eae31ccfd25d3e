import type { WorkerJob } from '@runplane/contracts';
import type { ClaimedJob } from '../store/job-rows.js';

/** How the worker protocol's messages map to and from job rows. */

export const exitedWith = (code: number | null) =>
  code === null ? 'worker exited' : `worker exited (exit code ${code})`;

/**
 * A worker's history line for a process that ended by itself: `crashed: exit code 1`,
 * `crashed: OOMKilled (exit code 137)`, `crashed: killed` (no code, no reason), `exited: …` for 0.
 */
export function endedReason(code: number | null, providerReason?: unknown): string {
  const how = code === 0 ? 'exited' : 'crashed';
  const why = typeof providerReason === 'string' ? providerReason.slice(0, 500) : '';
  if (why) return `${how}: ${why}${code === null ? '' : ` (exit code ${code})`}`;
  return code === null ? 'crashed: killed' : `${how}: exit code ${code}`;
}

/** `{id, input}` plus webhook / s3Config / policy when the request had them. */
export function toWorkerJob(job: ClaimedJob): WorkerJob {
  const out: WorkerJob = { id: job.id, input: job.input as Record<string, unknown> };
  if (job.webhook) out.webhook = job.webhook;
  if (job.s3Config !== null) out.s3Config = job.s3Config as Record<string, unknown>;
  if (job.policy !== null) out.policy = job.policy as Record<string, unknown>;
  return out;
}

/** runpod-python only sends `error` when the handler's error is truthy. */
export function isError(error: unknown): boolean {
  return error !== undefined && error !== null && error !== false && error !== '';
}

/** `error` is always a string in records: non-strings are kept as their JSON. */
export function errorString(error: unknown): string {
  return typeof error === 'string' ? error : JSON.stringify(error);
}
