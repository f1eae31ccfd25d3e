/**
 * Where Pods actually run. pod-rest owns the Pod records; a compute provider owns the workloads
 * behind them: a child process in standalone mode (`LocalComputeProvider`), a
 * Kubernetes Pod in cluster mode (a later issue). Everything is asynchronous and addressed by an
 * opaque `ref` so that a provider backed by a remote API fits the same shape.
 */

/** Hardware of a workload: enforced by Kubernetes (requests/limits), recorded locally. */
export interface WorkloadResources {
  vcpuCount?: number;
  memoryInGb?: number;
  gpuCount?: number;
  /** Extended resource name of the GPUs (default `nvidia.com/gpu`). */
  gpuResource?: string;
  gpuTypeId?: string | null;
  /** Kubernetes node selector of the GPU type (catalogue `nodeSelector`). */
  gpuNodeSelector?: Record<string, string>;
  /** The host's GPUs allocated to this workload (docker: a DeviceRequest for exactly these ids). */
  gpuDeviceIds?: string[];
}

/** Disks of a workload (as on RunPod: container disk wiped on restart, volume kept, network volume shared). */
export interface WorkloadDisks {
  containerDiskInGb?: number;
  volumeInGb?: number;
  volumeMountPath?: string;
  /**
   * A network volume: the operator's (Kubernetes: an existing PersistentVolumeClaim `claimName`),
   * or a user's (`sizeInGb` set: the provider creates it when missing, shared by every workload
   * that mounts it, until `deleteNetworkVolume(claimName)`).
   */
  networkVolume?: { id: string; claimName: string; mountPath: string; sizeInGb?: number };
  /**
   * The Runplane Pod whose volume outlives this workload (its later runs mount it again) until
   * `deleteVolume(key)`; absent for serverless workers, whose volume is scratch space.
   */
  persistentKey?: string;
}

/** What to run. Provider-neutral: the local provider runs argv, Kubernetes runs the image. */
export interface WorkloadSpec {
  /** The Pod id; unique among the provider's workloads. */
  id: string;
  /** Container image (recorded by the local provider, pulled and run by Kubernetes). */
  image: string;
  /** Overrides the image ENTRYPOINT; empty means the image's. */
  entrypoint: string[];
  /** Overrides the image CMD; empty means the image's. */
  command: string[];
  /** The workload's own environment (template env and worker protocol variables), not secret. */
  env: Record<string, string>;
  /**
   * Variables whose values are secret (resolved `{{ RUNPOD_SECRET_* }}` references, the worker
   * key): a Kubernetes Secret referenced by the container, never inline in its definition; merged
   * into the environment of a local process. Win over `env`.
   */
  secretEnv?: Record<string, string>;
  /** Exposed ports, `<port>/<http|tcp>`. */
  ports?: string[];
  resources?: WorkloadResources;
  disks?: WorkloadDisks;
  /** Identifying metadata (endpoint id, owner...): Kubernetes labels, log fields locally. Never secret. */
  labels?: Record<string, string>;
  /**
   * The owner's container registry auth (`containerRegistryAuthId`) a provider that pulls images
   * itself (docker) uses for the pull; the credentials are asked of the vault only then.
   */
  registryAuthId?: string;
}

/** Where a running workload can be reached (as on RunPod: empty until it has initialised). */
export interface WorkloadPlacement {
  /** Host machine (local: this host's name; Kubernetes: the node). */
  machineId?: string;
  publicIp?: string | null;
  /** Internal port → public port. */
  portMappings?: Record<string, number>;
}

export interface WorkloadHandle extends WorkloadPlacement {
  /** The provider's reference, passed back to stop/status/logs (stored on the Pod as `computeRef`). */
  ref: string;
  /** OS process id, when the provider runs processes. */
  pid?: number;
  startedAt: Date;
  /** `pending` when it does not run yet (Kubernetes scheduling, docker pulling its image); else running. */
  state?: 'pending' | 'running';
}

/** `pending`: accepted, not running yet (Kubernetes: scheduling, pulling the image). */
export type WorkloadState = 'pending' | 'running' | 'stopping' | 'exited';

export interface WorkloadStatus extends WorkloadPlacement {
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
  /** Why it is not running, when the provider knows (Kubernetes: `ImagePullBackOff: ...`, `OOMKilled`). */
  reason?: string;
}

/** Facts about a host machine the provider can see (the rest comes from the catalogue). */
export interface MachineFacts {
  id: string;
  cpuModel: string;
  cpuCount: number;
  threadsPerCore: number;
  memoryInGb: number | null;
  gpus: Array<{ name: string; memoryInGb: number | null }>;
  location?: string;
  dataCenterId?: string;
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
export type StatusListener = (status: WorkloadStatus) => void;
/** Output lines of the workload `ref`, as they come, oldest first. */
export type LogListener = (ref: string, lines: LogLine[]) => void;

export const DEFAULT_STOP_GRACE_MS = 10_000;

/** Raised when a workload cannot be started (bad command, missing executable...). */
export class WorkloadStartError extends Error {
  override readonly name = 'WorkloadStartError';
}

/** Abstract class rather than interface so it can be the Nest injection token. */
export abstract class ComputeProvider {
  abstract readonly kind: 'local' | 'kubernetes' | 'docker';
  private readonly statusListeners = new Set<StatusListener>();
  private readonly logListeners = new Set<LogListener>();
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
  /** The host `machineId` names, or null when this provider does not know it. */
  abstract describeMachine(machineId: string): Promise<MachineFacts | null>;
  /** The machine of a Pod that has not been placed yet: the local provider's only host; "" on Kubernetes. */
  abstract defaultMachineId(): string;
  /** The Pod is gone for good: its persistent volume (`disks.persistentKey`) is deleted. */
  abstract deleteVolume(persistentKey: string): Promise<void>;

  /** A user's network volume is deleted: so is what the provider created for it (none by default). */
  async deleteNetworkVolume(_claimName: string): Promise<void> {}

  /**
   * Refs of the workloads of this server the provider found running when it started (docker:
   * adopted containers), so that those whose Pod no longer wants them are stopped; null when the
   * provider does not adopt workloads.
   */
  async adoptedWorkloads(): Promise<string[] | null> {
    return null;
  }

  /**
   * Changes of a workload short of its exit (Kubernetes: scheduled on a node, running with an IP,
   * waiting on an image pull). A local process runs as soon as start() returns, so only exits matter there.
   */
  onStatus(listener: StatusListener): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
  }

  /**
   * Every output line of every workload, once, as it is read (local: as the process writes it;
   * Kubernetes: read from the log API while it runs, the rest once it ended). All lines of a
   * workload are delivered before its exit is told to `onExit` listeners.
   */
  onLog(listener: LogListener): () => void {
    this.logListeners.add(listener);
    return () => void this.logListeners.delete(listener);
  }

  protected emitLogs(ref: string, lines: LogLine[], onError: (err: unknown) => void): void {
    if (!lines.length) return;
    for (const listener of this.logListeners) {
      try {
        listener(ref, lines);
      } catch (err) {
        onError(err);
      }
    }
  }

  protected emitStatus(status: WorkloadStatus, onError: (err: unknown) => void): void {
    for (const listener of this.statusListeners) {
      try {
        listener(status);
      } catch (err) {
        onError(err);
      }
    }
  }
}
