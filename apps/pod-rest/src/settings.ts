import { Injectable } from '@nestjs/common';
import { boolSetting, environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';
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
