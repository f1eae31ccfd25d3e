/** Who ended a workload: its exit says so. */
export type StoppedBy = 'user' | 'server' | 'itself' | 'deletion' | 'scheduler';

/**
 * `lastStatusChange` texts. RunPod writes
 * "<event>: <date>"; the same shape here, with ISO dates.
 */
export const statusChange = {
  started: (at: Date) => `Started as a serverless worker: ${at.toISOString()}`,
  startFailed: (reason: string, at: Date) => `Failed to start (${reason}): ${at.toISOString()}`,
  terminated: (at: Date) => `Terminated by the scheduler: ${at.toISOString()}`,
  lostOnRestart: (at: Date) =>
    `Exited (its process did not survive a restart of the server): ${at.toISOString()}`,
  // Pods of users (POST /v1/pods) rather than serverless workers; exits are told alike.
  podStarting: (at: Date) => `Starting: ${at.toISOString()}`,
  podStarted: (at: Date) => `Started: ${at.toISOString()}`,
  podPending: (reason: string, at: Date) => `Waiting (${reason}): ${at.toISOString()}`,
  podRunningOn: (machineId: string, at: Date) => `Running on ${machineId}: ${at.toISOString()}`,
  podNotStarted: (reason: string, at: Date) => `Not started (${reason}): ${at.toISOString()}`,
  podStopping: (at: Date) => `Stopping: ${at.toISOString()}`,
  podWaitingForGpus: (gpus: { needed: number; free: number; total: number }, at: Date) =>
    `Waiting for GPUs (needs ${gpus.needed}, ${gpus.free} of ${gpus.total} free): ${at.toISOString()}`,
  podStoppedWaiting: (at: Date) => `Stopped (while waiting for GPUs): ${at.toISOString()}`,
  podExited: (
    exit: {
      exitCode: number | null;
      signal: string | null;
      by: StoppedBy;
      reason?: string;
    },
    at: Date,
  ) => {
    const how = [
      exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.exitCode ?? 'unknown'}`,
      exit.reason,
    ]
      .filter(Boolean)
      .join(', ');
    const why = {
      user: 'Stopped',
      server: 'Stopped with the server',
      itself: 'Exited',
      deletion: 'Terminated',
      scheduler: 'Terminated by the scheduler',
    }[exit.by];
    return `${why} (${how}): ${at.toISOString()}`;
  },
  podTerminated: (at: Date) => `Terminated: ${at.toISOString()}`,
};
