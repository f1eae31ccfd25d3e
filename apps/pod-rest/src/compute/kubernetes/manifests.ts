import type {
  V1Container,
  V1EnvVar,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { WorkloadSpec } from '../compute-provider.js';

/**
 * The Kubernetes objects of a workload (docs/compute.md shows them), built as plain data so that
 * the provider's requests are easy to check:
 *
 * - a Pod named after the workload (`restartPolicy: Never`: Runplane decides about restarts), with
 *   the image, `dockerEntrypoint` as `command` and `dockerStartCmd` as `args`, the ports, CPU,
 *   memory and GPU (`nvidia.com/gpu` or the catalogue's resource) requests = limits, the container
 *   disk as an `ephemeral-storage` limit, and labels for the installation, Pod, owner, endpoint,
 *   endpoint version and template;
 * - a Secret `<name>-env` holding the secret variables (resolved `{{ RUNPOD_SECRET_* }}`, the
 *   worker key), referenced by `secretKeyRef`: secret values never appear in the Pod object;
 * - the Pod volume (`volumeInGb` at `volumeMountPath`): a PersistentVolumeClaim `<podId>-volume`
 *   kept across restarts for Pods, an `emptyDir` with a `sizeLimit` for serverless workers
 *   (disposable); a network volume mounts the operator's existing claim instead.
 */
export const MANAGED_BY = 'runplane';
export const LABEL = {
  managedBy: 'app.kubernetes.io/managed-by',
  component: 'app.kubernetes.io/component',
  installation: 'runplane.io/installation',
  workload: 'runplane.io/workload',
  podId: 'runplane.io/pod-id',
  owner: 'runplane.io/owner',
  endpoint: 'runplane.io/endpoint',
  version: 'runplane.io/endpoint-version',
  template: 'runplane.io/template',
  networkVolume: 'runplane.io/network-volume',
} as const;

export interface ManifestOptions {
  namespace: string;
  installation: string;
  imagePullSecrets: string[];
  gpuRuntimeClass?: string;
  storageClass?: string;
  terminationGraceSeconds: number;
}

const DNS1123 = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const ENV_KEY = /^[-._a-zA-Z0-9]+$/;

export function isValidName(name: string): boolean {
  return DNS1123.test(name);
}

/** A label value: at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric. */
export function labelValue(value: string): string {
  const cleaned = value
    .replace(/[^A-Za-z0-9\-_.]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return cleaned;
}

export function selectorOf(installation: string): string {
  return `${LABEL.managedBy}=${MANAGED_BY},${LABEL.installation}=${labelValue(installation)}`;
}

export function secretName(workload: string): string {
  return `${workload}-env`;
}

export function volumeClaimName(podKey: string): string {
  return `${podKey}-volume`;
}

export function workloadLabels(spec: WorkloadSpec, o: ManifestOptions): Record<string, string> {
  const l = spec.labels ?? {};
  const labels: Record<string, string> = {
    [LABEL.managedBy]: MANAGED_BY,
    [LABEL.component]: l.endpointId ? 'serverless-worker' : 'pod',
    [LABEL.installation]: labelValue(o.installation),
    [LABEL.workload]: spec.id,
  };
  const add = (key: string, value: string | undefined) => {
    if (value && labelValue(value)) labels[key] = labelValue(value);
  };
  add(LABEL.podId, l.podId ?? spec.id);
  add(LABEL.owner, l.ownerId);
  add(LABEL.endpoint, l.endpointId);
  add(LABEL.version, l.slsVersion);
  add(LABEL.template, l.templateId);
  return labels;
}

/** The Secret with the workload's secret variables, or null when it has none. */
export function secretManifest(
  spec: WorkloadSpec,
  o: ManifestOptions,
): { secret: V1Secret; keys: Record<string, string> } | null {
  const entries = Object.entries(spec.secretEnv ?? {});
  if (!entries.length) return null;
  const keys: Record<string, string> = {};
  const data: Record<string, string> = {};
  entries.forEach(([name, value], i) => {
    const key = ENV_KEY.test(name) ? name : `env-${i}`;
    keys[name] = key;
    data[key] = value;
  });
  return {
    keys,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: secretName(spec.id),
        namespace: o.namespace,
        labels: workloadLabels(spec, o),
      },
      stringData: data,
    },
  };
}

/** The PersistentVolumeClaim of a Pod's volume (persists across its restarts), or null when it needs none. */
export function volumeClaimManifest(
  spec: WorkloadSpec,
  o: ManifestOptions,
): V1PersistentVolumeClaim | null {
  const podKey = spec.disks?.persistentKey;
  if (!podKey || !spec.disks?.volumeInGb || spec.disks.networkVolume) return null;
  const labels = workloadLabels(spec, o);
  delete labels[LABEL.workload]; // it outlives this workload
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: volumeClaimName(podKey), namespace: o.namespace, labels },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: `${spec.disks?.volumeInGb ?? 0}Gi` } },
      ...(o.storageClass ? { storageClassName: o.storageClass } : {}),
    },
  };
}

/** The claim of a user's network volume (`sizeInGb` set), shared by every workload that mounts it. */
export function networkVolumeClaimManifest(
  spec: WorkloadSpec,
  o: ManifestOptions,
): V1PersistentVolumeClaim | null {
  const volume = spec.disks?.networkVolume;
  if (!volume?.sizeInGb) return null;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: volume.claimName,
      namespace: o.namespace,
      labels: {
        [LABEL.managedBy]: MANAGED_BY,
        [LABEL.installation]: labelValue(o.installation),
        [LABEL.networkVolume]: labelValue(volume.id),
      },
    },
    spec: {
      accessModes: ['ReadWriteMany'],
      resources: { requests: { storage: `${volume.sizeInGb}Gi` } },
      ...(o.storageClass ? { storageClassName: o.storageClass } : {}),
    },
  };
}

/**
 * The Pod. With `disks.persistentKey` (Pods) the volume is that Pod's claim; without it
 * (serverless workers) an emptyDir.
 */
export function podManifest(
  spec: WorkloadSpec,
  o: ManifestOptions,
  secretKeys: Record<string, string> | null,
): V1Pod {
  const persistentVolumeKey = spec.disks?.persistentKey;
  const env: V1EnvVar[] = Object.entries(spec.env)
    .filter(([name]) => !secretKeys?.[name])
    .map(([name, value]) => ({ name, value }));
  for (const [name, key] of Object.entries(secretKeys ?? {})) {
    env.push({ name, valueFrom: { secretKeyRef: { name: secretName(spec.id), key } } });
  }

  const r = spec.resources ?? {};
  const quantities: Record<string, string> = {};
  if (r.vcpuCount) quantities.cpu = String(r.vcpuCount);
  if (r.memoryInGb) quantities.memory = `${Math.round(r.memoryInGb * 1024)}Mi`;
  if (r.gpuCount) quantities[r.gpuResource ?? 'nvidia.com/gpu'] = String(r.gpuCount);
  if (spec.disks?.containerDiskInGb)
    quantities['ephemeral-storage'] = `${spec.disks.containerDiskInGb}Gi`;

  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const d = spec.disks ?? {};
  const mountPath = d.volumeMountPath || '/workspace';
  if (d.networkVolume) {
    volumes.push({
      name: 'network-volume',
      persistentVolumeClaim: { claimName: d.networkVolume.claimName },
    });
    mounts.push({ name: 'network-volume', mountPath: d.networkVolume.mountPath });
  } else if (d.volumeInGb) {
    volumes.push(
      persistentVolumeKey
        ? {
            name: 'volume',
            persistentVolumeClaim: { claimName: volumeClaimName(persistentVolumeKey) },
          }
        : { name: 'volume', emptyDir: { sizeLimit: `${d.volumeInGb}Gi` } },
    );
    mounts.push({ name: 'volume', mountPath });
  }

  const container: V1Container = {
    name: 'main',
    image: spec.image,
    imagePullPolicy: 'IfNotPresent',
    ...(spec.entrypoint.length ? { command: spec.entrypoint } : {}),
    ...(spec.command.length ? { args: spec.command } : {}),
    env,
    ports: (spec.ports ?? []).map((p) => {
      const [port, protocol] = p.split('/');
      return {
        name: `${protocol}-${port}`.slice(0, 15),
        containerPort: Number(port),
        protocol: 'TCP',
      };
    }),
    resources: Object.keys(quantities).length
      ? { requests: { ...quantities }, limits: { ...quantities } }
      : undefined,
    ...(mounts.length ? { volumeMounts: mounts } : {}),
  };
  const gpu = !!r.gpuCount;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.id,
      namespace: o.namespace,
      labels: workloadLabels(spec, o),
      annotations: { 'runplane.io/image': spec.image },
    },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: o.terminationGraceSeconds,
      // Workloads are tenants' code: no Kubernetes API credentials.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      containers: [container],
      ...(volumes.length ? { volumes } : {}),
      ...(o.imagePullSecrets.length
        ? { imagePullSecrets: o.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      ...(gpu && o.gpuRuntimeClass ? { runtimeClassName: o.gpuRuntimeClass } : {}),
      ...(gpu && r.gpuNodeSelector ? { nodeSelector: r.gpuNodeSelector } : {}),
    },
  };
}
