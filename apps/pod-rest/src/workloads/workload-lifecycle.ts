import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RunplaneError, type GpuShortage } from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { CatalogueService } from '../catalogue/catalogue.service.js';
import {
  ComputeProvider,
  WorkloadStartError,
  type WorkloadHandle,
  type WorkloadStatus,
} from '../compute/compute-provider.js';
import { GpuAllocator } from '../gpus/gpu-allocator.js';
import { LogCollector } from '../logs/log-collector.js';
import { NetworkVolumesService } from '../network-volumes/network-volumes.service.js';
import { statusChange, type StoppedBy } from '../pods/pod-status.js';
import { PodsRepository, type PodChanges, type PodRow } from '../pods/pods.repository.js';
import { workloadSpec } from '../pods/workload-spec.js';
import { SecretEnv } from '../secrets/secret-env.js';

/** One run of a Pod: what the caller adds to the Pod's own settings. */
export interface WorkloadRun {
  /** The provider's reference of this run (a user's Pod: `<podId>-<run>`; a worker: its id). */
  ref: string;
  /** Variables that win over the Pod's env (worker protocol, `RUNPOD_POD_ID`). */
  extraEnv: Record<string, string>;
  /** Identifying metadata for the provider (Kubernetes labels, log fields). */
  labels: Record<string, string>;
  /** Users' Pods: the volume outlives the run. */
  persistentVolume?: boolean;
}

/** Why a start did not happen: what the Pod now says, and what caused it. */
export type StartOutcome =
  | { started: true; handle: WorkloadHandle }
  /** Not enough free GPUs: nothing was started or written; the caller decides (wait, refuse). */
  | { started: false; cause: 'gpus'; shortage: GpuShortage }
  | {
      started: false;
      /** The reason written on the Pod (`Failed to start (<reason>)`). */
      reason: string;
      /** The secrets could not be resolved (the vault's error), or the provider refused. */
      cause: 'secrets' | 'provider' | 'internal';
      error: unknown;
    };

/** Told after a workload's exit was recorded on its Pod (once per run); `pod` as it was before. */
export type ExitRecordedListener = (pod: PodRow, status: WorkloadStatus, by: StoppedBy) => void;

/** GPUs a Pod's workload needs from the host: whole GPUs, GPU Pods only. */
export function gpusNeeded(pod: Pick<PodRow, 'computeType' | 'gpuCount'>): number {
  return pod.computeType === 'GPU' ? pod.gpuCount : 0;
}

/**
 * The one home of a workload's lifecycle, for users' Pods and serverless workers alike: a start
 * (secrets resolved for the workload only, the provider-neutral spec, the provider's start, the
 * Pod's status), a stop (polite, forced after the provider's grace), the exit (code, signal,
 * reason, who stopped it) and the status changes short of it, and the server's start-up and
 * shutdown. Each compute provider is an adapter behind `ComputeProvider`; PodsService and
 * WorkersService decide when a workload runs.
 */
@Injectable()
export class WorkloadLifecycle
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /** Who asked for a running workload to stop: its exit says so ("Stopped", "Terminated"). */
  private readonly stoppedBy = new Map<string, StoppedBy>();
  /** Pod updates after exits and status changes, awaited before the database closes. */
  private readonly writes = new Set<Promise<void>>();
  private readonly exitListeners = new Set<ExitRecordedListener>();
  private readonly gpusFreedListeners = new Set<() => void>();
  private readonly unsubscribe: Array<() => void> = [];
  private reconciledNow!: (lost: PodRow[]) => void;
  /**
   * Resolves once start-up reconciliation is done (GPUs of runs lost meanwhile are free again),
   * with the Pods whose run did not survive the restart.
   */
  readonly reconciled = new Promise<PodRow[]>((resolve) => (this.reconciledNow = resolve));

  constructor(
    private readonly pods: PodsRepository,
    private readonly compute: ComputeProvider,
    private readonly secretEnv: SecretEnv,
    private readonly catalogue: CatalogueService,
    private readonly volumes: NetworkVolumesService,
    private readonly logs: LogCollector,
    private readonly gpus: GpuAllocator,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.unsubscribe.push(compute.onExit((status) => this.track(this.recordExit(status))));
    this.unsubscribe.push(compute.onStatus((status) => this.track(this.recordStatus(status))));
  }

  /** Pods recorded as running (or deleted but not yet ended) whose workload is gone are exited. */
  async onApplicationBootstrap(): Promise<void> {
    const lost: PodRow[] = [];
    for (const pod of await this.pods.findRunningWithWorkload()) {
      if (await this.compute.status(pod.computeRef!)) continue;
      const now = new Date();
      await this.pods.update(pod.id, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.lostOnRestart(now),
        exitedAt: now,
        gpuIds: [],
      });
      lost.push(pod);
    }
    // A deleted Pod whose exit was never recorded (the server went down meanwhile) would count as
    // using its template for ever: its workload is gone, so it ended.
    for (const pod of await this.pods.findDeletedNotExited()) {
      if (pod.computeRef && (await this.compute.status(pod.computeRef))) continue;
      await this.pods.update(pod.id, { exitedAt: new Date(), gpuIds: [] });
    }
    // Workloads the provider adopted (docker: containers of this server that outlived it) run on
    // only while their Pod's current run wants them: the rest are orphans of a crash mid-start or
    // mid-stop, and are stopped.
    const adopted = (await this.compute.adoptedWorkloads()) ?? [];
    await Promise.all(
      adopted.map(async (ref) => {
        const pod = await this.pods.findByComputeRef(ref);
        if (pod && pod.desiredStatus === 'RUNNING' && !pod.deletedAt) return;
        this.logger.info({ ref, podId: pod?.id }, 'stopping an orphaned workload');
        await this.compute
          .stop(ref)
          .catch((err) =>
            this.logger.warn({ ref, err: String(err) }, 'could not stop an orphaned workload'),
          );
      }),
    );
    this.reconciledNow(lost);
  }

  /**
   * Server shutdown: local workloads are stopped while HTTP, the bus and the database still work,
   * so workers can post the jobs they finish in their grace period and every exit is recorded.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.compute.releaseAll();
    await Promise.all([...this.writes]);
  }

  // Not onModuleDestroy: that runs before beforeApplicationShutdown, whose exits must be recorded.
  onApplicationShutdown(): void {
    this.unsubscribe.forEach((u) => u());
  }

  onExitRecorded(listener: ExitRecordedListener): () => void {
    this.exitListeners.add(listener);
    return () => void this.exitListeners.delete(listener);
  }

  /** Told when a run gave its host GPUs back (its exit, or a failed start). */
  onGpusFreed(listener: () => void): () => void {
    this.gpusFreedListeners.add(listener);
    return () => void this.gpusFreedListeners.delete(listener);
  }

  /**
   * Starts a run of the Pod. The row names the run (`computeRef`) before the provider starts it,
   * so its exit (which may come at once) always finds it; what the start reports is written only
   * while that run is still the Pod's and has not ended. A start that fails leaves the Pod EXITED
   * saying why (`Failed to start (<reason>)`). On a host whose GPUs pod-rest hands out, the run
   * first claims its GPUs (recorded with the run); when too few are free nothing is written and
   * the shortage is answered.
   */
  async start(pod: PodRow, run: WorkloadRun): Promise<StartOutcome> {
    const begun = new Date();
    const claimRun = (gpuIds: string[]) =>
      this.pods.update(pod.id, {
        computeRef: run.ref,
        runs: pod.runs + 1,
        desiredStatus: 'RUNNING',
        lastStatusChange: pod.endpointId
          ? statusChange.started(begun)
          : statusChange.podStarting(begun),
        exitedAt: null,
        exitCode: null,
        publicIp: null,
        portMappings: {},
        machineId: '',
        gpuIds,
        gpuWaitSince: null,
      });
    let gpuDeviceIds: string[] | undefined;
    if (this.gpus.enabled) {
      const claim = await this.gpus.claim(gpusNeeded(pod), claimRun);
      if ('shortage' in claim) return { started: false, cause: 'gpus', shortage: claim.shortage };
      gpuDeviceIds = claim.ids;
    } else await claimRun([]);
    const row = await this.pods.reload(pod.id);
    const fail = async (
      reason: string,
      cause: 'secrets' | 'provider' | 'internal',
      error: unknown,
    ): Promise<StartOutcome> => {
      const at = new Date();
      await this.pods.updateRun(pod.id, run.ref, {
        desiredStatus: 'EXITED',
        lastStatusChange: statusChange.startFailed(reason, at),
        exitedAt: at,
        gpuIds: [],
      });
      if (gpuDeviceIds?.length) this.tellGpusFreed();
      return { started: false, reason, cause, error };
    };

    const written = (row.env ?? {}) as Record<string, string>;
    let resolved: Record<string, string>;
    try {
      // Resolved for the workload only: never stored, logged or returned.
      resolved = await this.secretEnv.resolve(row.ownerId, written);
    } catch (err) {
      // The Pod says why it never ran (an unknown secret, or the vault not answering).
      const known = err instanceof RunplaneError;
      const reason =
        known && err.status < 500
          ? err.message
          : `its secrets could not be resolved: ${known ? err.message : 'internal error'}`;
      return fail(reason, 'secrets', err);
    }

    let handle: WorkloadHandle;
    try {
      const spec = workloadSpec(row, {
        ref: run.ref,
        resolvedEnv: resolved,
        extraEnv: run.extraEnv,
        catalogue: this.catalogue.get(),
        networkVolume: row.networkVolumeId
          ? await this.volumes.mountable(row.ownerId, row.networkVolumeId)
          : undefined,
        persistentVolume: run.persistentVolume,
        labels: run.labels,
      });
      // Exactly the GPUs this run holds ([] on a host with GPUs: none); absent where the provider
      // places GPUs itself (Kubernetes) or the host has none.
      if (gpuDeviceIds) spec.resources = { ...spec.resources, gpuDeviceIds };
      this.logs.expect(pod.id, spec, written);
      handle = await this.compute.start(spec);
    } catch (err) {
      if (err instanceof WorkloadStartError) return fail(err.message, 'provider', err);
      this.logger.error({ podId: pod.id, err: String(err) }, 'starting a workload failed');
      return fail('internal error', 'internal', err);
    }
    // A local process runs once started; a Kubernetes Pod is still being scheduled, a docker one
    // may be pulling its image (the handle says which).
    const runs = handle.state === 'running' || this.compute.kind === 'local' || !!pod.endpointId;
    await this.pods.updateRun(
      pod.id,
      run.ref,
      {
        lastStartedAt: handle.startedAt,
        lastStatusChange: pod.endpointId
          ? statusChange.started(handle.startedAt)
          : runs
            ? statusChange.podStarted(handle.startedAt)
            : statusChange.podStarting(handle.startedAt),
        machineId: handle.machineId ?? '',
        publicIp: handle.publicIp ?? null,
        portMappings: handle.portMappings ?? {},
      },
      true,
    );
    this.logger.info(
      { podId: pod.id, ref: run.ref, pid: handle.pid, ...run.labels },
      'workload started',
    );
    return { started: true, handle };
  }

  /**
   * Stops the Pod's current workload, if any, and resolves once it ended (graceful, then forced
   * after the provider's grace). An ended one is stopped too: that removes what is left of it (a
   * finished Kubernetes Pod).
   */
  async stop(pod: PodRow, by: Exclude<StoppedBy, 'itself' | 'server'>): Promise<void> {
    if (!pod.computeRef) return;
    const status = await this.compute.status(pod.computeRef);
    if (!status) return;
    const running = status.state !== 'exited';
    if (running) this.stoppedBy.set(pod.computeRef, by);
    const ended = await this.compute.stop(pod.computeRef);
    if (ended && running) await this.recordExit(ended); // idempotent with the listener's write
  }

  /** Whether the Pod's current workload runs (or is about to). */
  async isRunning(pod: PodRow): Promise<boolean> {
    if (!pod.computeRef || pod.desiredStatus !== 'RUNNING') return false;
    const status = await this.compute.status(pod.computeRef);
    return !!status && status.state !== 'exited';
  }

  /** The provider's view of the Pod's current workload, or null. */
  async status(pod: PodRow): Promise<WorkloadStatus | null> {
    return pod.computeRef ? this.compute.status(pod.computeRef) : null;
  }

  private async recordExit(status: WorkloadStatus): Promise<void> {
    const pod = await this.pods.findByComputeRef(status.ref);
    if (!pod) return; // an older run of a Pod, or not ours
    const at = status.exitedAt ?? new Date();
    const terminated = pod.desiredStatus === 'TERMINATED' || !!pod.deletedAt;
    const by: StoppedBy =
      this.stoppedBy.get(status.ref) ??
      (terminated
        ? pod.endpointId
          ? 'scheduler'
          : 'deletion'
        : status.stopRequested
          ? 'server'
          : 'itself');
    const done = await this.pods.updateRun(
      pod.id,
      status.ref,
      {
        desiredStatus: terminated ? 'TERMINATED' : 'EXITED',
        exitedAt: at,
        exitCode: status.exitCode,
        publicIp: null,
        portMappings: {},
        gpuIds: [],
        lastStatusChange: statusChange.podExited(
          { exitCode: status.exitCode, signal: status.signal, by, reason: status.reason },
          at,
        ),
      },
      true,
    );
    if (!done) return; // recorded already (the stop's own write and the listener's)
    this.stoppedBy.delete(status.ref);
    for (const listener of this.exitListeners) {
      try {
        listener(pod, status, by);
      } catch (err) {
        this.logger.error({ err: String(err) }, 'exit listener failed');
      }
    }
    if (pod.gpuIds.length) this.tellGpusFreed();
  }

  private tellGpusFreed(): void {
    for (const listener of this.gpusFreedListeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err: String(err) }, 'GPU listener failed');
      }
    }
  }

  /** Kubernetes: scheduled, running with an address, or waiting (image pull...). */
  private async recordStatus(status: WorkloadStatus): Promise<void> {
    if (status.state === 'exited') return;
    const pod = await this.pods.findByComputeRef(status.ref);
    if (!pod) return;
    const now = new Date();
    const changes: PodChanges = {
      machineId: status.machineId ?? pod.machineId,
      publicIp: status.publicIp ?? null,
      portMappings: status.portMappings ?? {},
    };
    if (status.state === 'running' && status.machineId)
      changes.lastStatusChange = statusChange.podRunningOn(status.machineId, now);
    else if (status.state === 'pending' && status.reason)
      changes.lastStatusChange = statusChange.podPending(status.reason, now);
    await this.pods.updateRun(pod.id, status.ref, changes, true);
  }

  private track(write: Promise<void>): void {
    const w = write
      .catch((err) => this.logger.error({ err: String(err) }, 'could not record a workload change'))
      .finally(() => this.writes.delete(w));
    this.writes.add(w);
  }
}
