/**
 * Where Pods actually run. pod-rest owns the Pod records; a compute provider owns the workloads
 * behind them: a child process in standalone mode (`LocalComputeProvider`, contract §5), a
 * Kubernetes Pod in cluster mode (a later issue). Everything is asynchronous and addressed by an
 * opaque `ref` so that a provider backed by a remote API fits the same shape.
 */

/** What to run. Provider-neutral: the local provider runs argv, Kubernetes would run the image. */
export interface WorkloadSpec {
  /** The Pod id; unique among the provider's workloads. */
  id: string;
  /** Container image (recorded by the local provider, pulled and run by Kubernetes). */
  image: string;
  /** Overrides the image ENTRYPOINT; empty means the image's. */
  entrypoint: string[];
  /** Overrides the image CMD; empty means the image's. */
  command: string[];
  /** The workload's own environment (template env and worker protocol variables). Values may be secret. */
  env: Record<string, string>;
  /** Identifying metadata (endpoint id, owner...): Kubernetes labels, log fields locally. Never secret. */
  labels?: Record<string, string>;
}

export interface WorkloadHandle {
  /** The provider's reference, passed back to stop/status/logs (stored on the Pod as `computeRef`). */
  ref: string;
  /** OS process id, when the provider runs processes. */
  pid?: number;
  startedAt: Date;
}

export type WorkloadState = 'running' | 'stopping' | 'exited';

export interface WorkloadStatus {
  ref: string;
  state: WorkloadState;
  pid?: number;
  startedAt: Date;
  /** Set once exited. */
  exitedAt?: Date;
  /** Exit code; killed by a signal → 128 + its number (shell convention). Null while running. */
  exitCode: number | null;
  /** The signal that ended it, if any (e.g. `SIGKILL`). */
  signal: string | null;
  /** True when the exit followed a stop() request (rather than the workload ending by itself). */
  stopRequested: boolean;
}

export interface StopOptions {
  /** Time between the polite stop (SIGTERM) and the forced one (SIGKILL). Default 10 s. */
  graceMs?: number;
}

export interface LogLine {
  at: Date;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface LogsOptions {
  /** Only the last n lines. */
  tail?: number;
}

export type ExitListener = (status: WorkloadStatus) => void;

export const DEFAULT_STOP_GRACE_MS = 10_000;

/** Raised when a workload cannot be started (bad command, missing executable...). */
export class WorkloadStartError extends Error {
  override readonly name = 'WorkloadStartError';
}

/** Abstract class rather than interface so it can be the Nest injection token. */
export abstract class ComputeProvider {
  abstract readonly kind: 'local' | 'kubernetes';
  /** Starts the workload; resolves once it runs (or rejects with WorkloadStartError). */
  abstract start(spec: WorkloadSpec): Promise<WorkloadHandle>;
  /**
   * Polite stop, forced after `graceMs`. Resolves with the final status once the workload ended,
   * or null if the provider does not know `ref`. Stopping an exited workload is a no-op.
   */
  abstract stop(ref: string, options?: StopOptions): Promise<WorkloadStatus | null>;
  /** Current status, or null when unknown (never started here, or forgotten long after it exited). */
  abstract status(ref: string): Promise<WorkloadStatus | null>;
  /** Recent output lines (bounded), oldest first; empty when unknown. */
  abstract logs(ref: string, options?: LogsOptions): Promise<LogLine[]>;
  /** Called once for every workload that ends, whatever the reason. Returns an unsubscribe function. */
  abstract onExit(listener: ExitListener): () => void;
  /**
   * The server is stopping. Workloads that cannot outlive it (local child processes) are stopped
   * and waited for; a provider whose workloads live elsewhere (Kubernetes) leaves them running.
   */
  abstract releaseAll(options?: StopOptions): Promise<void>;
}
