import { SECRET_REFERENCE } from '@runplane/contracts';
import type { Catalogue } from '../catalogue/catalogue.schema.js';
import { findGpuType } from '../catalogue/pricing.js';
import type { WorkloadSpec } from '../compute/compute-provider.js';
import type { PodRow } from './pods.repository.js';

/** Worker protocol variables that are credentials: secret like resolved secrets. */
const SECRET_WORKER_VARIABLES = new Set(['RUNPOD_AI_API_KEY']);

/**
 * What the compute provider runs for a Pod (worker or not). `resolvedEnv` is the Pod's env with its
 * `{{ RUNPOD_SECRET_* }}` references resolved: the variables that had references go to
 * `secretEnv` (a Kubernetes Secret), the rest inline; `extraEnv` (worker protocol) wins over both.
 */
export function workloadSpec(
  pod: PodRow,
  o: {
    ref: string;
    resolvedEnv: Record<string, string>;
    extraEnv?: Record<string, string>;
    catalogue: Catalogue;
    labels: Record<string, string>;
    /** The network volume the Pod mounts (NetworkVolumesService.mountable: its owner's, or a shared one). */
    networkVolume?: { id: string; claimName: string; sizeInGb?: number };
    /** Pods (not serverless workers): the volume persists across runs. */
    persistentVolume?: boolean;
  },
): WorkloadSpec {
  const written = (pod.env ?? {}) as Record<string, string>;
  const env: Record<string, string> = {};
  const secretEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(o.resolvedEnv)) {
    if (referencesSecret(written[key])) secretEnv[key] = value;
    else env[key] = value;
  }
  for (const [key, value] of Object.entries(o.extraEnv ?? {})) {
    delete env[key];
    delete secretEnv[key];
    (SECRET_WORKER_VARIABLES.has(key) ? secretEnv : env)[key] = value;
  }
  const volume = o.networkVolume;
  const gpu = pod.computeType === 'GPU' ? findGpuType(o.catalogue, pod.gpuTypeId) : undefined;
  return {
    id: o.ref,
    image: pod.image,
    entrypoint: pod.dockerEntrypoint,
    command: pod.dockerStartCmd,
    env,
    secretEnv,
    ports: pod.ports,
    resources: {
      vcpuCount: pod.vcpuCount || undefined,
      memoryInGb: pod.memoryInGb || undefined,
      gpuCount: pod.computeType === 'GPU' ? pod.gpuCount : 0,
      gpuResource: gpu?.resource ?? 'nvidia.com/gpu',
      gpuTypeId: pod.computeType === 'GPU' ? pod.gpuTypeId : null,
      ...(gpu?.nodeSelector ? { gpuNodeSelector: gpu.nodeSelector } : {}),
    },
    disks: {
      containerDiskInGb: pod.containerDiskInGb,
      volumeInGb: pod.volumeInGb,
      volumeMountPath: pod.volumeMountPath ?? '/workspace',
      ...(o.persistentVolume ? { persistentKey: pod.id } : {}),
      ...(volume
        ? {
            networkVolume: {
              id: volume.id,
              claimName: volume.claimName,
              ...(volume.sizeInGb ? { sizeInGb: volume.sizeInGb } : {}),
              mountPath: pod.volumeMountPath ?? '/workspace',
            },
          }
        : {}),
    },
    labels: o.labels,
    ...(pod.containerRegistryAuthId ? { registryAuthId: pod.containerRegistryAuthId } : {}),
  };
}

function referencesSecret(value: string | undefined): boolean {
  return value !== undefined && new RegExp(SECRET_REFERENCE.source).test(value);
}
