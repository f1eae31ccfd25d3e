import { Injectable } from '@nestjs/common';
import { boolSetting, environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_CATALOGUE_FILE = fileURLToPath(
  new URL('../catalogue/default.yaml', import.meta.url),
);
export const COMPUTE_PROVIDERS = ['local', 'kubernetes'] as const;
export type ComputeProviderKind = (typeof COMPUTE_PROVIDERS)[number];

/** pod-rest's own settings (docs/configuration.md, docs/compute.md), validated at start. */
@Injectable()
export class PodRestSettings {
  /** Where workloads run: child processes of this server, or Kubernetes Pods. */
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

  constructor(config: RunplaneConfig) {
    const env = environmentOf(config);
    const provider = (env.RUNPLANE_COMPUTE_PROVIDER || 'local').trim();
    if (!(COMPUTE_PROVIDERS as readonly string[]).includes(provider)) {
      throw new Error(
        `invalid configuration: RUNPLANE_COMPUTE_PROVIDER must be "local" or "kubernetes" (got ${JSON.stringify(provider)}). See docs/compute.md.`,
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
  }
}
