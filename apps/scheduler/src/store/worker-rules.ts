/** Rules of managed workers' lifecycle, shared by liveness checks and the autoscaler. */

/** The first back-off after a failed worker start (RUNPLANE_WORKER_START_BACKOFF_MS sets it). */
export const DEFAULT_START_BACKOFF_MS = 2000;

/**
 * Exponential back-off between failed worker starts of one endpoint, after `failures` in a row:
 * `firstMs`, twice that, four times ... at most 5 min (2 s, 4 s, 8 s ... by default).
 */
export function startBackoffMs(failures: number, firstMs = DEFAULT_START_BACKOFF_MS): number {
  return Math.min(300_000, firstMs * 2 ** (Math.max(1, Math.min(failures, 20)) - 1));
}
