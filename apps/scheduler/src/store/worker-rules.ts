/** Rules of managed workers' lifecycle, shared by liveness checks and the autoscaler. */

/** Exponential back-off between failed worker starts of one endpoint: 2 s, 4 s, ... 5 min. */
export function startBackoffMs(failures: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(1, Math.min(failures, 20)));
}
