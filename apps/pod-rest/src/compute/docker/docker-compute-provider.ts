import type { RegistryCredentials } from '@runplane/contracts';
import type { Logger } from '@runplane/platform';
import Docker from 'dockerode';
import { PassThrough } from 'node:stream';
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
  type WorkloadPlacement,
  type WorkloadSpec,
  type WorkloadStatus,
} from '../compute-provider.js';
import { HostMachine } from '../host-machine.js';
import { LogRingBuffer } from '../log-ring-buffer.js';
import {
  containerConfig,
  containerName,
  LABELS,
  podVolumeName,
  volumeLabels,
  type ContainerOptions,
} from './container-config.js';
import { engineMessage, ImagePullError, pullImage } from './image-puller.js';

export interface DockerOptions {
  /** Engine address: `unix:///var/run/docker.sock` (default), `tcp://host:2375`. */
  dockerHost: string;
  /** Label value of this server's containers (`io.runplane.server`). */
  serverId: string;
  /** `bridge` (default) or `host` (or a user-defined network). */
  network: string;
  /** Host address published ports bind to ("" = all). */
  publishAddress: string;
  defaultGraceMs?: number;
  /** The owner's registry credentials for a pull (the vault); absent: private images cannot be pulled. */
  registryAuth?: (ownerId: string, registryAuthId: string) => Promise<RegistryCredentials>;
  /** Exited workloads remembered for status/logs. */
  keepExited?: number;
}

interface Tracked {
  ref: string;
  state: WorkloadStatus['state'];
  containerId?: string;
  startedAt: Date;
  exitedAt?: Date;
  exitCode: number | null;
  reason?: string;
  stopRequested: boolean;
  placement: WorkloadPlacement;
  logs: LogRingBuffer;
  /** Resolves with the final status once it ended and was reported. */
  ended: Promise<WorkloadStatus>;
  resolve: (s: WorkloadStatus) => void;
  /** Streams to close when the server lets go of it (releaseAll). */
  streams: Array<{ destroy: () => void }>;
}

/**
 * A workload is a container of a Docker-compatible engine (Docker, or podman's API socket), made
 * with dockerode: the image's own ENTRYPOINT/CMD unless the template overrides them, the env with
 * resolved secrets, ports published on the host, the Pod's volume as a named volume. Images are
 * pulled when missing (the owner's registry auth from the vault), the pull's progress told as the
 * Pod's status and log lines. Containers outlive the server: labelled with this server's id, the
 * running ones are adopted when it starts again; the exits of those that ended meanwhile are
 * reported then.
 */
export class DockerComputeProvider extends ComputeProvider {
  readonly kind = 'docker' as const;
  readonly docker: Docker;
  private readonly host = new HostMachine();
  private readonly tracked = new Map<string, Tracked>();
  private readonly exitedOrder: string[] = [];
  private readonly exitListeners = new Set<ExitListener>();
  private engine?: Promise<{ name: string; cpus: number; memoryBytes: number; podman: boolean }>;
  private diskLimits = true;
  private adopted: string[] = [];
  private released = false;
  /** Ends the long requests (wait, followed logs) when the server lets go of its containers. */
  private readonly lifetime = new AbortController();

  constructor(
    private readonly o: DockerOptions,
    private readonly logger: Logger,
  ) {
    super();
    this.docker = new Docker(dockerConnection(o.dockerHost));
  }

  /** Reaches the engine and adopts this server's containers (running ones tracked, ended ones reported). */
  async onModuleInit(): Promise<void> {
    const engine = await this.engineInfo().catch((err: unknown) => {
      throw new Error(
        `RUNPLANE_COMPUTE_PROVIDER=docker: the container engine at DOCKER_HOST=${this.o.dockerHost} does not answer (${engineMessage(err)}); ` +
          'start Docker (or `podman system service`) or point DOCKER_HOST at it. See docs/compute.md.',
      );
    });
    this.logger.info(
      {
        dockerHost: this.o.dockerHost,
        engine: engine.podman ? 'podman' : 'docker',
        serverId: this.o.serverId,
        network: this.o.network,
      },
      'docker compute provider connected',
    );
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.server}=${this.o.serverId}`] },
    });
    for (const c of containers) {
      const ref = c.Labels[LABELS.workload];
      if (!ref) continue;
      const t = this.track(ref, new Date(c.Created * 1000));
      t.containerId = c.Id;
      if (c.State === 'running') {
        t.state = 'running';
        t.placement = await this.placementOf(c.Id);
        this.adopted.push(ref);
        this.watch(t, Math.floor(Date.now() / 1000));
      } else {
        // Ended while no server watched it: its exit is reported (and the container removed).
        void this.ended(t);
      }
    }
    if (containers.length)
      this.logger.info(
        { running: this.adopted.length, ended: containers.length - this.adopted.length },
        'docker containers of this server found',
      );
  }

  override async adoptedWorkloads(): Promise<string[]> {
    return [...this.adopted];
  }

  async start(spec: WorkloadSpec): Promise<WorkloadHandle> {
    if (!spec.image) throw new WorkloadStartError(`cannot start ${spec.id}: no image`);
    const existing = this.tracked.get(spec.id);
    if (existing && existing.state !== 'exited')
      throw new WorkloadStartError(`workload ${spec.id} is already running`);
    await this.engineInfo().catch((err) => {
      throw new WorkloadStartError(
        `cannot start ${spec.id}: the container engine at ${this.o.dockerHost} is not reachable (${engineMessage(err)})`,
      );
    });
    const t = this.track(spec.id, new Date(), true);
    if (await this.hasImage(spec.image)) {
      try {
        await this.launch(spec, t);
      } catch (err) {
        this.forget(t);
        throw new WorkloadStartError(`cannot start ${spec.id}: ${engineMessage(err)}`);
      }
      // Told after the caller recorded the start (which says "Starting"): now it runs, with its ports.
      setImmediate(() => {
        if (t.state === 'running') this.emitStatus(this.describe(t), this.onListenerError);
      });
      return { ref: spec.id, startedAt: t.startedAt, state: 'running', ...t.placement };
    }
    // Pulling may take minutes: the start answers now, the Pod waits with the pull's progress.
    void this.pullAndLaunch(spec, t);
    return {
      ref: spec.id,
      startedAt: t.startedAt,
      state: 'pending',
      machineId: t.placement.machineId,
      publicIp: null,
      portMappings: {},
    };
  }

  private async pullAndLaunch(spec: WorkloadSpec, t: Tracked): Promise<void> {
    this.emitStatus(this.describe(t, `Pulling ${spec.image}`), this.onListenerError);
    try {
      const credentials =
        spec.registryAuthId && spec.labels?.ownerId && this.o.registryAuth
          ? await this.o.registryAuth(spec.labels.ownerId, spec.registryAuthId)
          : undefined;
      await pullImage(this.docker, spec.image, credentials, {
        line: (line) => this.emitLogs(spec.id, [line], this.onListenerError),
        progress: (summary) => {
          if (t.state === 'pending')
            this.emitStatus(this.describe(t, summary), this.onListenerError);
        },
      });
      if (isOver(t)) return; // stopped while pulling
      await this.launch(spec, t);
      if (!isOver(t)) this.emitStatus(this.describe(t), this.onListenerError);
    } catch (err) {
      const reason =
        err instanceof ImagePullError
          ? `image ${spec.image} could not be pulled: ${err.message}`
          : err instanceof Error && 'status' in err && (err as { status: number }).status < 500
            ? `registry auth ${spec.registryAuthId}: ${err.message}`
            : `cannot start: ${engineMessage(err)}`;
      this.logger.warn(
        { podId: spec.id, image: spec.image, reason },
        'docker workload not started',
      );
      this.emitLogs(
        spec.id,
        [{ at: new Date(), stream: 'stderr', text: `[runplane] ${reason}` }],
        this.onListenerError,
      );
      this.finish(t, { exitCode: null, reason });
    }
  }

  /** Creates and starts the container (a leftover of the same name, from a start cut short, is replaced). */
  private async launch(spec: WorkloadSpec, t: Tracked): Promise<void> {
    const engine = await this.engineInfo();
    const options: ContainerOptions = {
      serverId: this.o.serverId,
      network: this.o.network,
      hostAlias: engine.podman ? 'host.containers.internal' : 'host.docker.internal',
      addHostGateway: !engine.podman,
      engineCpus: engine.cpus,
      diskLimits: this.diskLimits,
      publishAddress: this.o.publishAddress,
    };
    await this.createVolumes(spec);
    const container = await this.create(spec, options);
    try {
      // Stopped while it was being created: it never runs.
      if (isOver(t)) throw new Error('stopped before it started');
      await container.start();
    } catch (err) {
      await container.remove({ force: true, v: true }).catch(() => undefined);
      if (isOver(t)) return;
      throw err;
    }
    t.containerId = container.id;
    t.state = 'running';
    t.startedAt = new Date();
    t.placement = await this.placementOf(container.id);
    this.watch(t, 0);
    // Image and workload only: env and arguments may carry keys.
    this.logger.info(
      { ...spec.labels, podId: spec.id, image: spec.image, container: container.id.slice(0, 12) },
      'docker container started',
    );
  }

  /**
   * Named volumes are made before the container (the engine would make them unlabelled): labelled
   * with this server and the Pod, so what a server leaves behind can be found.
   */
  private async createVolumes(spec: WorkloadSpec): Promise<void> {
    const d = spec.disks;
    const names = [
      d?.persistentKey && d.volumeInGb && !d.networkVolume
        ? podVolumeName(this.o.serverId, d.persistentKey)
        : undefined,
      d?.networkVolume && !d.networkVolume.claimName.startsWith('/')
        ? d.networkVolume.claimName
        : undefined,
    ].filter((n): n is string => !!n);
    for (const name of names) {
      const exists = await this.docker
        .getVolume(name)
        .inspect()
        .then(
          () => true,
          () => false,
        );
      if (exists) continue;
      await this.docker
        .createVolume({ Name: name, Labels: volumeLabels(spec, this.o.serverId) })
        .catch((err: unknown) => {
          if ((err as { statusCode?: number }).statusCode !== 409) throw err;
        });
    }
  }

  private async create(spec: WorkloadSpec, options: ContainerOptions): Promise<Docker.Container> {
    const config = containerConfig(spec, options);
    try {
      return await this.docker.createContainer(config);
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      const message = engineMessage(err);
      if (config.HostConfig?.StorageOpt && /storage[- ]?opt|quota|size/i.test(message)) {
        // overlay without project quotas (podman, most Docker hosts): the disk size is not enforced.
        this.diskLimits = false;
        this.logger.warn(
          { reason: message },
          'the container engine cannot limit container disk sizes (containerDiskInGb is recorded, not enforced)',
        );
        return this.create(spec, { ...options, diskLimits: false });
      }
      if (status === 409) {
        await this.docker
          .getContainer(containerName(this.o.serverId, spec.id))
          .remove({ force: true, v: true })
          .catch(() => undefined);
        return this.docker.createContainer(config);
      }
      throw err;
    }
  }

  /** Follows the container's output (stdout/stderr apart) and waits for its end. */
  private watch(t: Tracked, since: number): void {
    const container = this.docker.getContainer(t.containerId!);
    const logsDone = (async () => {
      const stream = (await container.logs({
        follow: true,
        stdout: true,
        stderr: true,
        since,
        abortSignal: this.lifetime.signal,
      })) as NodeJS.ReadableStream & { destroy: () => void };
      t.streams.push(stream);
      const out = new PassThrough();
      const err = new PassThrough();
      out.on('data', (chunk: Buffer) => t.logs.write('stdout', chunk));
      err.on('data', (chunk: Buffer) => t.logs.write('stderr', chunk));
      this.docker.modem.demuxStream(stream, out, err);
      await new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', () => resolve());
      });
    })().catch(() => undefined);
    void (async () => {
      try {
        await container.wait({ abortSignal: this.lifetime.signal });
      } catch {
        if (this.released) return;
        // The wait was cut (engine restarted): whatever state it is in now decides.
        const state = await container.inspect().catch(() => null);
        if (state?.State.Running) return this.watch(t, Math.floor(Date.now() / 1000));
      }
      if (this.released) return;
      // Its last lines come before its exit; a stream that does not end is not waited for long.
      await Promise.race([logsDone, new Promise((r) => setTimeout(r, 2000).unref())]);
      await this.ended(t);
    })();
  }

  /** The container ended: its exit code and reason are read, it is removed, and its exit reported. */
  private async ended(t: Tracked): Promise<void> {
    const container = this.docker.getContainer(t.containerId!);
    const info = await container.inspect().catch(() => null);
    const state = info?.State;
    const reason = state?.OOMKilled ? 'OOMKilled' : state?.Error || undefined;
    const finishedAt = state?.FinishedAt ? new Date(state.FinishedAt) : undefined;
    await container.remove({ force: true, v: true }).catch(() => undefined);
    this.finish(t, {
      exitCode: state ? state.ExitCode : null,
      reason: info ? reason : 'the container was removed',
      exitedAt: finishedAt && finishedAt.getTime() > 0 ? finishedAt : undefined,
    });
  }

  private finish(
    t: Tracked,
    exit: { exitCode: number | null; reason?: string; exitedAt?: Date },
  ): void {
    if (t.state === 'exited') return;
    t.logs.flush();
    t.state = 'exited';
    t.exitedAt = exit.exitedAt ?? new Date();
    t.exitCode = exit.exitCode;
    t.reason = exit.reason;
    t.streams.forEach((s) => s.destroy());
    t.streams = [];
    const status = this.describe(t);
    this.remember(t.ref);
    this.logger.info(
      {
        podId: t.ref,
        exitCode: t.exitCode,
        reason: t.reason,
        stopRequested: t.stopRequested,
      },
      'docker workload ended',
    );
    t.resolve(status);
    for (const listener of this.exitListeners) {
      try {
        listener(status);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  async stop(ref: string, options: StopOptions = {}): Promise<WorkloadStatus | null> {
    const t = this.tracked.get(ref);
    if (!t) return null;
    if (t.state === 'exited') return this.describe(t);
    t.stopRequested = true;
    if (t.state === 'pending' && !t.containerId) {
      // Still pulling: it ends now; the pull goes on (the image stays) but nothing is started.
      this.finish(t, { exitCode: null, reason: 'stopped before it started (pulling its image)' });
      return t.ended;
    }
    t.state = 'stopping';
    const graceMs = options.graceMs ?? this.o.defaultGraceMs ?? DEFAULT_STOP_GRACE_MS;
    try {
      // SIGTERM (or the image's STOPSIGNAL), SIGKILL after the grace.
      await this.docker.getContainer(t.containerId!).stop({ t: Math.ceil(graceMs / 1000) });
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== 304 && status !== 404) throw err;
      if (status === 404) void this.ended(t);
    }
    return t.ended;
  }

  async status(ref: string): Promise<WorkloadStatus | null> {
    const t = this.tracked.get(ref);
    return t ? this.describe(t) : null;
  }

  async logs(ref: string, options: LogsOptions = {}): Promise<LogLine[]> {
    return this.tracked.get(ref)?.logs.read(options.tail) ?? [];
  }

  onExit(listener: ExitListener): () => void {
    this.exitListeners.add(listener);
    return () => void this.exitListeners.delete(listener);
  }

  /** Containers outlive the server (adopted when it starts again): only the watching stops. */
  async releaseAll(): Promise<void> {
    this.released = true;
    this.lifetime.abort();
    for (const t of this.tracked.values()) {
      t.streams.forEach((s) => s.destroy());
      t.streams = [];
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.releaseAll();
  }

  defaultMachineId(): string {
    return this.host.id;
  }

  /** This host when the engine runs here (nvidia-smi's GPUs too); else the engine's CPUs and memory. */
  async describeMachine(machineId: string): Promise<MachineFacts | null> {
    if (machineId === this.host.id) return this.host.describe();
    const engine = await this.engineInfo().catch(() => null);
    if (!engine || engine.name !== machineId) return null;
    return {
      id: machineId,
      cpuModel: 'unknown',
      cpuCount: engine.cpus,
      threadsPerCore: 1,
      memoryInGb: Math.round((engine.memoryBytes / 1024 ** 3) * 10) / 10,
      gpus: [],
    };
  }

  async deleteVolume(persistentKey: string): Promise<void> {
    await this.removeVolume(podVolumeName(this.o.serverId, persistentKey));
  }

  override async deleteNetworkVolume(claimName: string): Promise<void> {
    if (!claimName.startsWith('/')) await this.removeVolume(claimName);
  }

  private async removeVolume(name: string): Promise<void> {
    try {
      await this.docker.getVolume(name).remove({ force: true });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 404) throw err;
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  private engineInfo() {
    this.engine ??= this.docker.version().then(async (version) => {
      const info = await this.docker.info();
      return {
        name: String(info.Name ?? this.host.id),
        cpus: Number(info.NCPU) || 1,
        memoryBytes: Number(info.MemTotal) || 0,
        podman: (version.Components ?? []).some((c) => /podman/i.test(c.Name)),
      };
    });
    // A failed first contact is tried again on the next call.
    return this.engine.catch((err: unknown) => {
      this.engine = undefined;
      throw err;
    });
  }

  private async hasImage(image: string): Promise<boolean> {
    try {
      await this.docker.getImage(image).inspect();
      return true;
    } catch {
      return false;
    }
  }

  /** Published ports as the engine bound them; the host's address as its public IP. */
  private async placementOf(containerId: string): Promise<WorkloadPlacement> {
    const info = await this.docker.getContainer(containerId).inspect();
    const hostNetwork = info.HostConfig.NetworkMode === 'host';
    const portMappings: Record<string, number> = {};
    const bound = info.NetworkSettings.Ports ?? {};
    for (const [key, bindings] of Object.entries(bound)) {
      const port = key.split('/')[0];
      const hostPort = Number(bindings?.[0]?.HostPort);
      if (hostPort > 0) portMappings[port] = hostPort;
    }
    if (hostNetwork) {
      for (const key of Object.keys(info.Config.ExposedPorts ?? {}))
        portMappings[key.split('/')[0]] = Number(key.split('/')[0]);
    }
    return { machineId: this.host.id, publicIp: this.host.publicIp(), portMappings };
  }

  private track(ref: string, startedAt: Date, fresh = false): Tracked {
    const old = this.tracked.get(ref);
    if (old && !fresh) return old;
    let resolve!: (s: WorkloadStatus) => void;
    const ended = new Promise<WorkloadStatus>((r) => {
      resolve = r;
    });
    const t: Tracked = {
      ref,
      state: 'pending',
      startedAt,
      exitCode: null,
      stopRequested: false,
      placement: { machineId: this.host.id, publicIp: null, portMappings: {} },
      ended,
      resolve,
      streams: [],
      logs: new LogRingBuffer({}, (line) => this.emitLogs(ref, [line], this.onListenerError)),
    };
    this.tracked.set(ref, t);
    return t;
  }

  private forget(t: Tracked): void {
    if (this.tracked.get(t.ref) === t) this.tracked.delete(t.ref);
  }

  private describe(t: Tracked, pendingReason?: string): WorkloadStatus {
    const exited = t.state === 'exited';
    return {
      ref: t.ref,
      state: t.state,
      startedAt: t.startedAt,
      exitedAt: t.exitedAt,
      exitCode: exited ? t.exitCode : null,
      signal: null,
      stopRequested: t.stopRequested,
      reason: exited ? t.reason : pendingReason,
      ...(exited || t.state === 'pending'
        ? { machineId: t.placement.machineId, publicIp: null, portMappings: {} }
        : t.placement),
    };
  }

  private remember(ref: string): void {
    this.exitedOrder.push(ref);
    while (this.exitedOrder.length > (this.o.keepExited ?? 200)) {
      const old = this.exitedOrder.shift()!;
      if (this.tracked.get(old)?.state === 'exited') this.tracked.delete(old);
    }
  }

  private readonly onListenerError = (err: unknown) =>
    this.logger.error({ err: String(err) }, 'compute listener failed');
}

/** Ended (a check that survives awaits: TypeScript keeps a narrowed `t.state` across them). */
const isOver = (t: Tracked) => t.state === 'exited';

/** dockerode's connection options for a DOCKER_HOST value. */
export function dockerConnection(dockerHost: string): Docker.DockerOptions {
  const url = new URL(dockerHost);
  if (url.protocol === 'unix:') return { socketPath: url.pathname };
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:')
    return {
      host: url.hostname,
      port: Number(url.port) || 2375,
      protocol: url.protocol === 'https:' ? 'https' : 'http',
    };
  throw new Error(
    `invalid configuration: DOCKER_HOST must be unix:///path or tcp://host:port (got ${JSON.stringify(dockerHost)}). See docs/compute.md.`,
  );
}
