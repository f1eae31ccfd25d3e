import type { ContainerCreateOptions, MountSettings } from 'dockerode';
import path from 'node:path';
import type { WorkloadSpec } from '../compute-provider.js';

/** Labels on every container and volume this provider makes (never secret). */
export const LABELS = {
  managedBy: 'io.runplane.managed-by',
  /** The server (installation and data) a container belongs to: another server never adopts it. */
  server: 'io.runplane.server',
  /** The workload ref (`Pod.computeRef`). */
  workload: 'io.runplane.workload',
  pod: 'io.runplane.pod',
  owner: 'io.runplane.owner',
  endpoint: 'io.runplane.endpoint',
  endpointVersion: 'io.runplane.endpoint-version',
  template: 'io.runplane.template',
  networkVolume: 'io.runplane.network-volume',
} as const;

/** Worker protocol variables whose URLs must be reachable from inside the container. */
const SERVER_URL_VARIABLE = /^RUNPOD_WEBHOOK_/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface ContainerOptions {
  serverId: string;
  /** `bridge` (default), `host`, or a user-defined network. */
  network: string;
  /**
   * Name under which containers on a bridge reach this host (podman: `host.containers.internal`,
   * Docker: `host.docker.internal`, added as `host-gateway`); loopback URLs of the worker
   * protocol are rewritten to it.
   */
  hostAlias: string;
  /** Docker needs the alias added (`host-gateway`); podman adds its own. */
  addHostGateway: boolean;
  /** Host CPUs of the engine: a limit above them is refused by the engine. */
  engineCpus: number;
  /** Whether the engine applies `containerDiskInGb` (`StorageOpt size`); false once it refused. */
  diskLimits: boolean;
  /** Address published ports bind to on the host ("" = all). */
  publishAddress: string;
}

export const containerName = (serverId: string, ref: string) => `runplane-${serverId}-${ref}`;

/** The Pod's own volume (kept across runs, deleted with the Pod). */
export const podVolumeName = (serverId: string, persistentKey: string) =>
  `runplane-${serverId}-${persistentKey}-volume`;

/** What the engine creates for a workload: the container with its env, ports, mounts and limits. */
export function containerConfig(spec: WorkloadSpec, o: ContainerOptions): ContainerCreateOptions {
  const env = { ...reachableUrls(spec.env, o), ...spec.secretEnv };
  const ports = exposedPorts(spec.ports ?? []);
  const hostNetwork = o.network === 'host';
  const vcpus = spec.resources?.vcpuCount;
  const memoryGb = spec.resources?.memoryInGb;
  const gpuIds = spec.resources?.gpuDeviceIds ?? [];
  return {
    name: containerName(o.serverId, spec.id),
    Image: spec.image,
    ...(spec.entrypoint.length ? { Entrypoint: spec.entrypoint } : {}),
    ...(spec.command.length ? { Cmd: spec.command } : {}),
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: containerLabels(spec, o.serverId),
    ...(hostNetwork ? {} : { ExposedPorts: Object.fromEntries(ports.map((p) => [p, {}])) }),
    HostConfig: {
      NetworkMode: o.network,
      ...(hostNetwork
        ? {}
        : {
            PortBindings: Object.fromEntries(
              ports.map((p) => [p, [{ HostIp: o.publishAddress, HostPort: '' }]]),
            ),
          }),
      ...(o.addHostGateway && !hostNetwork ? { ExtraHosts: [`${o.hostAlias}:host-gateway`] } : {}),
      ...(vcpus ? { NanoCpus: Math.round(Math.min(vcpus, o.engineCpus) * 1e9) } : {}),
      ...(memoryGb ? { Memory: Math.round(memoryGb * 1024 ** 3) } : {}),
      ...(gpuIds.length
        ? { DeviceRequests: [{ Driver: 'nvidia', DeviceIDs: gpuIds, Capabilities: [['gpu']] }] }
        : {}),
      ...(o.diskLimits && spec.disks?.containerDiskInGb
        ? { StorageOpt: { size: `${spec.disks.containerDiskInGb}G` } }
        : {}),
      Mounts: mounts(spec, o.serverId),
    },
  };
}

export function containerLabels(spec: WorkloadSpec, serverId: string): Record<string, string> {
  const l = spec.labels ?? {};
  const labels: Record<string, string | undefined> = {
    [LABELS.managedBy]: 'runplane',
    [LABELS.server]: serverId,
    [LABELS.workload]: spec.id,
    [LABELS.pod]: l.podId ?? spec.id,
    [LABELS.owner]: l.ownerId,
    [LABELS.endpoint]: l.endpointId,
    [LABELS.endpointVersion]: l.slsVersion,
    [LABELS.template]: l.templateId,
  };
  return Object.fromEntries(
    Object.entries(labels).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/** Labels of a named volume: whose it is (a network volume is shared: no Pod). */
export function volumeLabels(spec: WorkloadSpec, serverId: string): Record<string, string> {
  const l = spec.labels ?? {};
  const network = spec.disks?.networkVolume;
  return Object.fromEntries(
    Object.entries({
      [LABELS.managedBy]: 'runplane',
      [LABELS.server]: serverId,
      [LABELS.owner]: l.ownerId,
      [LABELS.pod]: network ? undefined : (l.podId ?? spec.disks?.persistentKey),
      [LABELS.networkVolume]: network?.id,
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/**
 * The Pod's volume at `volumeMountPath`: a named volume kept across runs for Pods, an anonymous one
 * (removed with the container) for serverless workers; a network volume instead when it has one —
 * a host directory when its claim name is an absolute path, else a named volume.
 */
function mounts(spec: WorkloadSpec, serverId: string): MountSettings[] {
  const d = spec.disks;
  if (!d) return [];
  const nv = d.networkVolume;
  if (nv) {
    return path.isAbsolute(nv.claimName)
      ? [{ Type: 'bind', Source: nv.claimName, Target: nv.mountPath }]
      : [{ Type: 'volume', Source: nv.claimName, Target: nv.mountPath }];
  }
  if (!d.volumeInGb || !d.volumeMountPath) return [];
  return [
    d.persistentKey
      ? {
          Type: 'volume',
          Source: podVolumeName(serverId, d.persistentKey),
          Target: d.volumeMountPath,
        }
      : { Type: 'volume', Target: d.volumeMountPath },
  ] as MountSettings[];
}

/** `8000/http`, `22/tcp`, `53/udp` → the engine's `8000/tcp`... (http is TCP). */
function exposedPorts(ports: string[]): string[] {
  const out = new Set<string>();
  for (const p of ports) {
    const [num, proto] = p.split('/');
    const n = Number.parseInt(num, 10);
    if (n > 0 && n < 65536) out.add(`${n}/${proto === 'udp' ? 'udp' : 'tcp'}`);
  }
  return [...out];
}

/**
 * The worker protocol URLs name this server as its own process sees it (127.0.0.1 in standalone
 * mode); from a container on a bridge that is the container itself, so they name the host alias.
 */
function reachableUrls(env: Record<string, string>, o: ContainerOptions): Record<string, string> {
  if (o.network === 'host') return env;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    out[k] = SERVER_URL_VARIABLE.test(k) ? onHostAlias(v, o.hostAlias) : v;
  }
  return out;
}

function onHostAlias(value: string, alias: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  if (!LOOPBACK_HOSTS.has(url.hostname)) return value;
  // Replaced textually: URL serialisation would escape the `$ID` placeholder of the protocol.
  return value.replace(`//${url.host}`, `//${alias}${url.port ? `:${url.port}` : ''}`);
}
