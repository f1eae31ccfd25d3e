import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type Informer,
  type ObjectCache,
  type V1Node,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import type { Logger } from '@runplane/platform';
import {
  ComputeProvider,
  DEFAULT_STOP_GRACE_MS,
  WorkloadStartError,
  type ExitListener,
  type LogLine,
  type LogsOptions,
  type MachineFacts,
  type StopOptions,
  type WorkloadHandle,
  type WorkloadSpec,
  type WorkloadStatus,
} from '../compute-provider.js';
import type { PodRestSettings } from '../../settings.js';
import {
  isValidName,
  podManifest,
  secretManifest,
  secretName,
  selectorOf,
  networkVolumeClaimManifest,
  volumeClaimManifest,
  volumeClaimName,
  type ManifestOptions,
} from './manifests.js';

/** A failed watch is started again after this long. */
const REWATCH_MS = 2000;
/** Nodes are read at most this often (machine objects). */
const NODE_CACHE_MS = 60_000;
/** Waiting reasons after which a Pod will not start by itself (its image cannot be pulled, its config is wrong). */
const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

export interface KubernetesOptions extends ManifestOptions {
  defaultGraceMs?: number;
  /** How often the logs of running workloads are read (default 2 s). */
  logPollMs?: number;
}

interface Tracked {
  stopRequested: boolean;
  reported: boolean;
  /** Resolves with the final status when the Pod ends (or is deleted). */
  ended: Promise<WorkloadStatus>;
  resolve: (status: WorkloadStatus) => void;
  lastKey?: string;
  /** Log lines read so far: the newest timestamp (ms) and how many lines carried it. */
  logCursor?: { at: number; seen: number };
  /** The read of its logs under way (one at a time per workload). */
  logRead?: Promise<void>;
}

/**
 * Cluster compute (docs/compute.md): a workload is a Kubernetes Pod in one namespace, created with
 * the official client (`@kubernetes/client-node`). Its status comes from an informer (list, then
 * watch) on the installation's Pods, mapped back to Runplane: waiting/scheduled → `pending`,
 * Running → `running` on its node with the Pod IP, Succeeded/Failed/deleted → exited with the
 * container's exit code and reason (OOMKilled...). Workloads outlive pod-rest: a restarted
 * pod-rest finds them again through the informer, and shutdown leaves them running.
 */
export class KubernetesComputeProvider extends ComputeProvider {
  readonly kind = 'kubernetes' as const;
  private readonly core: CoreV1Api;
  private informer?: Informer<V1Pod> & ObjectCache<V1Pod>;
  private readonly tracked = new Map<string, Tracked>();
  private readonly exitListeners = new Set<ExitListener>();
  private readonly nodes = new Map<string, { at: number; facts: MachineFacts | null }>();
  private stopped = false;
  private rewatch?: NodeJS.Timeout;
  private logPoll?: NodeJS.Timeout;
  private ready?: Promise<void>;

  constructor(
    private readonly kc: KubeConfig,
    private readonly o: KubernetesOptions,
    private readonly logger: Logger,
  ) {
    super();
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** In a cluster: the service account of pod-rest; elsewhere: KUBECONFIG or ~/.kube/config. */
  static fromSettings(settings: PodRestSettings, logger: Logger): KubernetesComputeProvider {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    if (!kc.getCurrentCluster())
      throw new Error(
        'RUNPLANE_COMPUTE_PROVIDER=kubernetes: no Kubernetes cluster configured (in-cluster service account, KUBECONFIG or ~/.kube/config). See docs/compute.md.',
      );
    return new KubernetesComputeProvider(
      kc,
      {
        ...settings.kubernetes,
        defaultGraceMs: settings.kubernetes.terminationGraceSeconds * 1000,
      },
      logger,
    );
  }

  /** Starts the informer; resolves once the current Pods are listed (status() answers from it). */
  async onModuleInit(): Promise<void> {
    await this.watch();
    this.logPoll = setInterval(() => this.collectRunning(), this.o.logPollMs ?? 2000);
    this.logPoll.unref();
  }

  async start(spec: WorkloadSpec): Promise<WorkloadHandle> {
    if (!isValidName(spec.id))
      throw new WorkloadStartError(`cannot start ${spec.id}: not a valid Kubernetes Pod name`);
    if (!spec.image) throw new WorkloadStartError(`cannot start ${spec.id}: no image`);
    await this.ready;
    const ns = this.o.namespace;
    const secret = secretManifest(spec, this.o);
    try {
      for (const claim of [
        volumeClaimManifest(spec, this.o),
        networkVolumeClaimManifest(spec, this.o),
      ]) {
        if (claim)
          await this.createIfMissing(() =>
            this.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim }),
          );
      }
      // The Secret first: the Pod must never run without its variables.
      if (secret) await this.createOrReplaceSecret(secret.secret);
      this.track(spec.id);
      const pod = await this.core.createNamespacedPod({
        namespace: ns,
        body: podManifest(spec, this.o, secret?.keys ?? null),
      });
      // Deleted with its Pod (garbage collection), whoever deletes the Pod.
      if (secret) {
        await this.core
          .patchNamespacedSecret(
            {
              name: secretName(spec.id),
              namespace: ns,
              body: {
                metadata: {
                  ownerReferences: [
                    {
                      apiVersion: 'v1',
                      kind: 'Pod',
                      name: spec.id,
                      uid: pod.metadata!.uid!,
                      blockOwnerDeletion: false,
                    },
                  ],
                },
              },
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .catch((err) =>
            this.logger.warn(
              { podId: spec.id, err: describe(err) },
              'could not make the Pod own its Secret; it is deleted with the workload instead',
            ),
          );
      }
      this.logger.info(
        { ...spec.labels, podId: spec.id, image: spec.image, namespace: ns },
        'kubernetes pod created',
      );
      return {
        ref: spec.id,
        startedAt: new Date(pod.metadata?.creationTimestamp ?? Date.now()),
        machineId: pod.spec?.nodeName ?? '',
        publicIp: null,
        portMappings: {},
      };
    } catch (err) {
      this.tracked.delete(spec.id);
      if (secret)
        await this.core
          .deleteNamespacedSecret({ name: secretName(spec.id), namespace: ns })
          .catch(() => undefined);
      if (err instanceof ApiException && err.code < 500 && err.code !== 401 && err.code !== 403) {
        throw new WorkloadStartError(
          `cannot start ${spec.id}: Kubernetes refused it (${err.code}): ${messageOf(err)}`,
        );
      }
      throw err;
    }
  }

  async stop(ref: string, options: StopOptions = {}): Promise<WorkloadStatus | null> {
    await this.ready;
    const current = await this.status(ref);
    if (!current) return null;
    const t = this.track(ref);
    t.stopRequested = true;
    const graceMs = options.graceMs ?? this.o.defaultGraceMs ?? DEFAULT_STOP_GRACE_MS;
    try {
      await this.core.deleteNamespacedPod({
        name: ref,
        namespace: this.o.namespace,
        gracePeriodSeconds: Math.ceil(graceMs / 1000),
      });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
    }
    await this.core
      .deleteNamespacedSecret({ name: secretName(ref), namespace: this.o.namespace })
      .catch(() => undefined);
    if (current.state === 'exited')
      return { ...current, stopRequested: t.stopRequested || current.stopRequested };
    // The informer reports the deletion; not waiting forever if the watch is down.
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), graceMs + 15_000).unref());
    const ended = await Promise.race([t.ended, timeout]);
    if (ended) return ended;
    const gone = await this.readPod(ref);
    return gone
      ? this.describe(gone)
      : this.report(ref, {
          ...current,
          state: 'exited',
          exitedAt: new Date(),
          exitCode: null,
          reason: 'deleted',
        });
  }

  async status(ref: string): Promise<WorkloadStatus | null> {
    await this.ready;
    const pod = this.informer?.get(ref, this.o.namespace) ?? (await this.readPod(ref));
    return pod ? this.describe(pod) : null;
  }

  async logs(ref: string, options: LogsOptions = {}): Promise<LogLine[]> {
    try {
      return await this.readLog(ref, { tailLines: options.tail ?? 1000 });
    } catch {
      return [];
    }
  }

  private async readLog(
    ref: string,
    o: { tailLines?: number; sinceSeconds?: number },
  ): Promise<LogLine[]> {
    const text = await this.core.readNamespacedPodLog({
      name: ref,
      namespace: this.o.namespace,
      container: 'main',
      timestamps: true,
      ...o,
    });
    return String(text)
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const cut = line.indexOf(' ');
        const at = new Date(line.slice(0, cut));
        return Number.isNaN(at.getTime())
          ? { at: new Date(), stream: 'stdout' as const, text: line }
          : { at, stream: 'stdout' as const, text: line.slice(cut + 1) };
      });
  }

  /** Running workloads: their new lines are read and told to the log listeners. */
  private collectRunning(): void {
    for (const [ref, t] of this.tracked) {
      if (t.reported) continue;
      const pod = this.informer?.get(ref, this.o.namespace);
      const state = pod ? this.describe(pod).state : 'pending';
      if (state === 'running' || state === 'stopping') void this.collectLogs(ref);
    }
  }

  /**
   * Reads the lines written since the last read (the log API's `sinceSeconds` is whole seconds:
   * lines already told are skipped by their timestamps). A Pod whose logs cannot be read (not
   * started, already deleted) gives none.
   */
  private collectLogs(ref: string): Promise<void> {
    const t = this.track(ref);
    t.logRead = (t.logRead ?? Promise.resolve()).then(async () => {
      const cursor = t.logCursor;
      let lines: LogLine[];
      try {
        lines = await this.readLog(ref, {
          sinceSeconds: cursor ? Math.ceil((Date.now() - cursor.at) / 1000) + 1 : undefined,
        });
      } catch {
        return;
      }
      let skip = cursor?.seen ?? 0;
      const fresh = lines.filter((line) => {
        const at = line.at.getTime();
        if (cursor && at < cursor.at) return false;
        if (cursor && at === cursor.at && skip > 0) {
          skip--;
          return false;
        }
        return true;
      });
      const last = lines.at(-1);
      if (last) {
        const at = last.at.getTime();
        t.logCursor = { at, seen: lines.filter((l) => l.at.getTime() === at).length };
      }
      this.emitLogs(ref, fresh, (err) =>
        this.logger.error({ err: String(err) }, 'log listener failed'),
      );
    });
    return t.logRead;
  }

  onExit(listener: ExitListener): () => void {
    this.exitListeners.add(listener);
    return () => void this.exitListeners.delete(listener);
  }

  /** Workloads live in the cluster, not in this process: they keep running; only the watch stops. */
  async releaseAll(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.rewatch);
    clearInterval(this.logPoll);
    await this.informer?.stop().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.releaseAll();
  }

  defaultMachineId(): string {
    return '';
  }

  async deleteVolume(persistentKey: string): Promise<void> {
    try {
      await this.core.deleteNamespacedPersistentVolumeClaim({
        name: volumeClaimName(persistentKey),
        namespace: this.o.namespace,
      });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
    }
  }

  override async deleteNetworkVolume(claimName: string): Promise<void> {
    try {
      await this.core.deleteNamespacedPersistentVolumeClaim({
        name: claimName,
        namespace: this.o.namespace,
      });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
    }
  }

  /** The node: capacity, GPU labels (GPU feature discovery), region/zone. Null when unknown or not readable (RBAC). */
  async describeMachine(machineId: string): Promise<MachineFacts | null> {
    if (!machineId) return null;
    const hit = this.nodes.get(machineId);
    if (hit && Date.now() - hit.at < NODE_CACHE_MS) return hit.facts;
    let facts: MachineFacts | null = null;
    try {
      facts = nodeFacts(await this.core.readNode({ name: machineId }));
    } catch (err) {
      if (!(err instanceof ApiException && (err.code === 404 || err.code === 403))) throw err;
    }
    this.nodes.set(machineId, { at: Date.now(), facts });
    return facts;
  }

  // ---- the informer --------------------------------------------------------------------------

  private watch(): Promise<void> {
    const ns = this.o.namespace;
    const selector = selectorOf(this.o.installation);
    const informer = makeInformer<V1Pod>(
      this.kc,
      `/api/v1/namespaces/${ns}/pods`,
      () => this.core.listNamespacedPod({ namespace: ns, labelSelector: selector }),
      selector,
    );
    this.informer = informer;
    informer.on('add', (pod) => this.observe(pod));
    informer.on('update', (pod) => this.observe(pod));
    informer.on('delete', (pod) => this.observe(pod, true));
    informer.on('error', (err) => {
      if (this.stopped) return;
      this.logger.warn({ err: describe(err) }, 'kubernetes pod watch failed; watching again');
      clearTimeout(this.rewatch);
      this.rewatch = setTimeout(() => void informer.start().catch(() => undefined), REWATCH_MS);
      this.rewatch.unref();
    });
    this.ready = informer.start().then(() => {
      // Pods that ended while no pod-rest was watching are reported now.
      for (const pod of informer.list(ns)) this.observe(pod);
    });
    return this.ready;
  }

  private observe(pod: V1Pod, deleted = false): void {
    const ref = pod.metadata?.name;
    if (!ref) return;
    const status = deleted ? this.deletedStatus(pod) : this.describe(pod);
    if (status.state === 'exited') {
      this.report(ref, status);
      return;
    }
    const key = `${status.state}|${status.machineId}|${status.publicIp}|${status.reason}`;
    const t = this.track(ref);
    if (t.lastKey === key) return;
    t.lastKey = key;
    this.emitStatus(status, (err) =>
      this.logger.error({ err: String(err) }, 'status listener failed'),
    );
  }

  /** Tells the exit once per workload. */
  private report(ref: string, status: WorkloadStatus): WorkloadStatus {
    const t = this.track(ref);
    const final = { ...status, stopRequested: status.stopRequested || t.stopRequested };
    if (t.reported) return final;
    t.reported = true;
    t.resolve(final);
    this.logger.info(
      {
        podId: ref,
        exitCode: final.exitCode,
        reason: final.reason,
        stopRequested: final.stopRequested,
      },
      'kubernetes pod ended',
    );
    // Its last lines are told before its exit.
    void this.collectLogs(ref).finally(() => {
      for (const listener of this.exitListeners) {
        try {
          listener(final);
        } catch (err) {
          this.logger.error({ err: String(err) }, 'exit listener failed');
        }
      }
    });
    return final;
  }

  private track(ref: string): Tracked {
    let t = this.tracked.get(ref);
    if (!t) {
      let resolve!: (s: WorkloadStatus) => void;
      const ended = new Promise<WorkloadStatus>((r) => {
        resolve = r;
      });
      t = { stopRequested: false, reported: false, ended, resolve };
      this.tracked.set(ref, t);
      if (this.tracked.size > 10_000) {
        // Bounded: forget the oldest reported ones.
        for (const [k, v] of this.tracked) {
          if (v.reported) {
            this.tracked.delete(k);
            break;
          }
        }
      }
    }
    return t;
  }

  private describe(pod: V1Pod): WorkloadStatus {
    const ref = pod.metadata!.name!;
    const t = this.tracked.get(ref);
    const c = pod.status?.containerStatuses?.[0];
    const phase = pod.status?.phase ?? 'Pending';
    const startedAt = new Date(
      pod.status?.startTime ?? pod.metadata?.creationTimestamp ?? Date.now(),
    );
    const machineId = pod.spec?.nodeName ?? '';
    const base = {
      ref,
      startedAt,
      machineId,
      stopRequested: t?.stopRequested ?? false,
      signal: null,
    };
    if (phase === 'Succeeded' || phase === 'Failed' || c?.state?.terminated) {
      const term = c?.state?.terminated;
      return {
        ...base,
        state: 'exited',
        exitCode: term?.exitCode ?? (phase === 'Succeeded' ? 0 : null),
        exitedAt: new Date(term?.finishedAt ?? Date.now()),
        reason:
          [term?.reason ?? pod.status?.reason, term?.message ?? pod.status?.message]
            .filter(Boolean)
            .join(': ') || undefined,
        publicIp: null,
        portMappings: {},
      };
    }
    if (pod.metadata?.deletionTimestamp) return { ...base, state: 'stopping', exitCode: null };
    if (phase === 'Running' && c?.state?.running) {
      const ports = (pod.spec?.containers?.[0]?.ports ?? []).map((p) => p.containerPort);
      return {
        ...base,
        state: 'running',
        exitCode: null,
        publicIp: pod.status?.podIP ?? null,
        portMappings: Object.fromEntries(ports.map((p) => [String(p), p])),
      };
    }
    const waiting = c?.state?.waiting;
    const unschedulable = pod.status?.conditions?.find(
      (x) => x.type === 'PodScheduled' && x.status === 'False',
    );
    const reason = waiting
      ? [waiting.reason, waiting.message].filter(Boolean).join(': ')
      : unschedulable
        ? [unschedulable.reason, unschedulable.message].filter(Boolean).join(': ')
        : undefined;
    if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
      this.logger.warn({ podId: ref, reason }, 'kubernetes pod cannot start');
    return { ...base, state: 'pending', exitCode: null, reason, publicIp: null, portMappings: {} };
  }

  private deletedStatus(pod: V1Pod): WorkloadStatus {
    const s = this.describe(pod);
    if (s.state === 'exited') return s;
    return {
      ...s,
      state: 'exited',
      exitedAt: new Date(),
      exitCode: null,
      reason: 'deleted',
      publicIp: null,
      portMappings: {},
    };
  }

  private async readPod(ref: string): Promise<V1Pod | null> {
    try {
      return await this.core.readNamespacedPod({ name: ref, namespace: this.o.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return null;
      throw err;
    }
  }

  private async createIfMissing(create: () => Promise<unknown>): Promise<void> {
    try {
      await create();
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
    }
  }

  /** A leftover Secret of the same name (a start cut short) is replaced. */
  private async createOrReplaceSecret(secret: V1Secret): Promise<void> {
    try {
      await this.core.createNamespacedSecret({ namespace: this.o.namespace, body: secret });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
      await this.core.deleteNamespacedSecret({
        name: secret.metadata!.name!,
        namespace: this.o.namespace,
      });
      await this.core.createNamespacedSecret({ namespace: this.o.namespace, body: secret });
    }
  }
}

export function nodeFacts(node: V1Node): MachineFacts {
  const labels = node.metadata?.labels ?? {};
  const capacity = node.status?.capacity ?? {};
  const gpuCount = Number(capacity['nvidia.com/gpu'] ?? capacity['amd.com/gpu'] ?? 0);
  const gpuName =
    labels['nvidia.com/gpu.product']?.replace(/-/g, ' ') ??
    (capacity['amd.com/gpu'] ? 'AMD GPU' : 'GPU');
  const gpuMemoryMiB = Number(labels['nvidia.com/gpu.memory']);
  return {
    id: node.metadata!.name!,
    cpuModel:
      labels['feature.node.kubernetes.io/cpu-model.id'] ??
      node.status?.nodeInfo?.architecture ??
      'unknown',
    cpuCount: Number.parseInt(capacity.cpu ?? '0', 10) || 0,
    threadsPerCore: 1,
    memoryInGb: memoryGb(capacity.memory),
    gpus: Array.from({ length: gpuCount }, () => ({
      name: gpuName,
      memoryInGb: Number.isFinite(gpuMemoryMiB)
        ? Math.round((gpuMemoryMiB / 1024) * 10) / 10
        : null,
    })),
    location: labels['topology.kubernetes.io/region'],
    dataCenterId: labels['topology.kubernetes.io/zone'],
  };
}

function memoryGb(quantity: string | undefined): number | null {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity ?? '');
  if (!m) return null;
  const factor: Record<string, number> = {
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
  };
  return Math.round(((Number(m[1]) * (factor[m[2] ?? ''] ?? 1)) / 1024 ** 3) * 10) / 10;
}

function messageOf(err: ApiException<unknown>): string {
  const body = err.body as { message?: string } | string | undefined;
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body.slice(0, 300);
    } catch {
      return body.slice(0, 300);
    }
  }
  return body?.message ?? err.message;
}

function describe(err: unknown): string {
  return err instanceof ApiException
    ? `${err.code}: ${messageOf(err)}`
    : err instanceof Error
      ? err.message
      : String(err);
}
