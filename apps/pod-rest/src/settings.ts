import { Injectable } from '@nestjs/common';
import { boolSetting, environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_CATALOGUE_FILE = fileURLToPath(
  new URL('../catalogue/default.yaml', import.meta.url),
);
export const COMPUTE_PROVIDERS = ['local', 'kubernetes', 'docker'] as const;
export type ComputeProviderKind = (typeof COMPUTE_PROVIDERS)[number];

/** pod-rest's own settings (docs/configuration.md, docs/compute.md), validated at start. */
@Injectable()
export class PodRestSettings {
  /** Where workloads run: child processes of this server, Kubernetes Pods, or containers of a Docker engine. */
  readonly computeProvider: ComputeProviderKind;
  /** The operator's machine and price catalogue (YAML). */
  readonly catalogueFile: string;
  /** How often (at most) the catalogue file is checked for edits. */
  readonly catalogueRecheckMs: number;
  /**
   * Local provider: whether Pods created through `/v1/pods` run their command as a process of this
   * host. Off, they are recorded but never started (serverless workers are not affected).
   */
  readonly localPodProcesses: boolean;
  /** Local provider: how workloads are kept from the server and from each other (docs/security.md). */
  readonly localIsolation: {
    /** Each workload runs as its own unprivileged uid/gid (needs a server running as root). */
    separateUsers: boolean;
    /** The uids (= gids) handed out, one per running workload. */
    firstUid: number;
    uidCount: number;
    /** Where each workload gets its own home and working directory. */
    workDir: string;
  };
  /**
   * Local provider: who may run commands. `admins` (users holding an admin key), `all`, or those
   * plus a list of user ids. The local provider cannot contain a command the way a container can.
   */
  readonly localRunUsers: { all: boolean; userIds: string[] };
  /**
   * The host's GPUs instead of what nvidia-smi lists: `none`, or GPUs as nvidia-smi's
   * `index, uuid, name, memory.total` lines separated by `;` (docs/compute.md, "GPUs").
   */
  readonly gpus?: string;
  /** Workload logs kept in the database, per Pod (docs/configuration.md): the oldest lines go first. */
  readonly logs: { maxLines: number; maxBytes: number };
  /** Kubernetes provider settings. */
  readonly kubernetes: {
    namespace: string;
    /** Label value separating installations that share a namespace (the bus namespace). */
    installation: string;
    /** Optional StorageClass of the PersistentVolumeClaims made for Pod volumes (volumeInGb). */
    storageClass?: string;
    /** Optional image pull Secret names given to every Pod. */
    imagePullSecrets: string[];
    /** Optional RuntimeClass of GPU Pods (e.g. `nvidia`). */
    gpuRuntimeClass?: string;
    /** Grace between SIGTERM and SIGKILL of a stopped Pod, in seconds. */
    terminationGraceSeconds: number;
  };
  /** Docker provider settings (docs/compute.md). */
  readonly docker: {
    /** DOCKER_HOST: the engine's API (a Docker daemon, or podman's API socket). */
    dockerHost: string;
    /** Label value of this server's containers: another server on the engine never adopts them. */
    serverId: string;
    /** `bridge`, `host` or a user-defined network. */
    network: string;
    /** Host address published ports bind to ("" = all). */
    publishAddress: string;
    /** Grace between SIGTERM and SIGKILL of a stopped container, in seconds. */
    stopGraceSeconds: number;
  };

  constructor(config: RunplaneConfig) {
    const env = environmentOf(config);
    const provider = (env.RUNPLANE_COMPUTE_PROVIDER || 'local').trim();
    if (!(COMPUTE_PROVIDERS as readonly string[]).includes(provider)) {
      throw new Error(
        `invalid configuration: RUNPLANE_COMPUTE_PROVIDER must be "local", "kubernetes" or "docker" (got ${JSON.stringify(provider)}). See docs/compute.md.`,
      );
    }
    this.computeProvider = provider as ComputeProviderKind;
    this.catalogueFile = env.RUNPLANE_CATALOGUE_FILE?.trim() || DEFAULT_CATALOGUE_FILE;
    this.catalogueRecheckMs = intSetting(
      env,
      'RUNPLANE_CATALOGUE_RECHECK_MS',
      10_000,
      0,
      3_600_000,
    );
    this.localPodProcesses = boolSetting(env, 'RUNPLANE_LOCAL_POD_PROCESSES', true);
    const list = (v?: string) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    const isolation = (env.RUNPLANE_LOCAL_ISOLATION || 'auto').trim();
    if (!['auto', 'users', 'none'].includes(isolation))
      throw new Error(
        `invalid configuration: RUNPLANE_LOCAL_ISOLATION must be "auto", "users" or "none" (got ${JSON.stringify(isolation)}). See docs/security.md.`,
      );
    const isRoot = process.getuid?.() === 0;
    if (isolation === 'users' && !isRoot)
      throw new Error(
        'invalid configuration: RUNPLANE_LOCAL_ISOLATION=users needs a server running as root (it runs each workload as its own user). See docs/security.md.',
      );
    const uids = /^(\d+)-(\d+)$/.exec((env.RUNPLANE_LOCAL_UIDS || '200000-201999').trim());
    if (!uids || Number(uids[1]) < 1000 || Number(uids[2]) < Number(uids[1]))
      throw new Error(
        'invalid configuration: RUNPLANE_LOCAL_UIDS must be a range "first-last" of unused uids from 1000 up (default 200000-201999). See docs/security.md.',
      );
    this.localIsolation = {
      separateUsers: isolation === 'users' || (isolation === 'auto' && isRoot),
      firstUid: Number(uids[1]),
      uidCount: Number(uids[2]) - Number(uids[1]) + 1,
      workDir: env.RUNPLANE_LOCAL_WORK_DIR?.trim() || path.join(os.tmpdir(), 'runplane-workloads'),
    };
    const runUsers = list(env.RUNPLANE_LOCAL_RUN_USERS || 'admins');
    this.localRunUsers = {
      all: runUsers.includes('all'),
      userIds: runUsers.filter((u) => u !== 'admins' && u !== 'all'),
    };
    this.gpus = env.RUNPLANE_GPUS?.trim() || undefined;
    this.logs = {
      maxLines: intSetting(env, 'RUNPLANE_LOG_MAX_LINES', 10_000, 1, 10_000_000),
      maxBytes: intSetting(env, 'RUNPLANE_LOG_MAX_BYTES', 4 * 1024 * 1024, 1024, 1024 ** 3),
    };
    const namespace = env.RUNPLANE_KUBERNETES_NAMESPACE?.trim() || 'default';
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) {
      throw new Error(
        `invalid configuration: RUNPLANE_KUBERNETES_NAMESPACE must be a Kubernetes namespace name (got ${JSON.stringify(namespace)}). See docs/compute.md.`,
      );
    }
    this.kubernetes = {
      namespace,
      installation: config.RUNPLANE_BUS_NAMESPACE,
      storageClass: env.RUNPLANE_KUBERNETES_STORAGE_CLASS?.trim() || undefined,
      imagePullSecrets: list(env.RUNPLANE_KUBERNETES_IMAGE_PULL_SECRETS),
      gpuRuntimeClass: env.RUNPLANE_KUBERNETES_GPU_RUNTIME_CLASS?.trim() || undefined,
      terminationGraceSeconds: intSetting(
        env,
        'RUNPLANE_KUBERNETES_TERMINATION_GRACE_SECONDS',
        10,
        0,
        3600,
      ),
    };
    const dockerHost = env.DOCKER_HOST?.trim() || 'unix:///var/run/docker.sock';
    const serverId = env.RUNPLANE_DOCKER_SERVER_ID?.trim() || defaultServerId(config);
    // Checked only for the docker provider: DOCKER_HOST may be set for other tools (ssh://...).
    if (this.computeProvider === 'docker') {
      if (!/^(unix:\/\/\/.+|(tcp|http|https):\/\/[^/]+\/?)$/.test(dockerHost))
        throw new Error(
          `invalid configuration: DOCKER_HOST must be unix:///path/to/socket or tcp://host:port (got ${JSON.stringify(dockerHost)}). See docs/compute.md.`,
        );
      if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(serverId))
        throw new Error(
          `invalid configuration: RUNPLANE_DOCKER_SERVER_ID must be lowercase letters, digits, ".", "_" or "-" (at most 63; got ${JSON.stringify(serverId)}). See docs/compute.md.`,
        );
    }
    this.docker = {
      dockerHost,
      serverId,
      network: env.RUNPLANE_DOCKER_NETWORK?.trim() || 'bridge',
      publishAddress: env.RUNPLANE_DOCKER_PUBLISH_ADDRESS?.trim() ?? '',
      stopGraceSeconds: intSetting(env, 'RUNPLANE_DOCKER_STOP_GRACE_SECONDS', 10, 0, 3600),
    };
  }
}

/**
 * Who this server is to the engine: its database (cluster mode: replicas sharing one database share
 * their Pods) or its data directory (standalone), with the bus namespace. A server in memory gets a
 * new id each run (its Pods do not outlive it either).
 */
function defaultServerId(config: RunplaneConfig): string {
  const env = environmentOf(config);
  const database = env.DATABASE_URL?.trim().replace(/\/\/[^@/]*@/, '//');
  const identity =
    database ||
    (config.RUNPLANE_DATA_DIR === 'memory'
      ? `memory:${randomBytes(8).toString('hex')}`
      : `${os.hostname()}:${path.resolve(config.RUNPLANE_DATA_DIR)}`);
  const hash = createHash('sha256')
    .update(`${config.RUNPLANE_BUS_NAMESPACE}\0${identity}`)
    .digest('hex');
  return hash.slice(0, 12);
}
