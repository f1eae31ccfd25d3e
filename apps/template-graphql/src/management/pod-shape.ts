import {
  joinDockerArgs,
  PodCreateDto,
  type ErrorDetail,
  type Pod,
  type PodMachine,
} from '@runplane/contracts';
import { flattenValidationErrors } from '@runplane/platform';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { envMap, invalid, portList } from '../graphql/template-shape.js';
import {
  CloudTypeEnum,
  PodStatus,
  type DeployCpuPodInput,
  type PodFindAndDeployOnDemandInput,
  type PodGql,
  type PodMachineInfo,
  type PodRuntime,
} from './pod.types.js';

/**
 * Pods in RunPod's GraphQL shape: `ports` a comma-separated string, `env` "KEY=value" strings,
 * `dockerArgs` the start command as one string, `runtime` while it runs. The REST Pod pod-rest
 * answers is converted here; nothing is computed that REST does not already say.
 */
export function toGraphqlPod(p: Pod, now = Date.now()): PodGql {
  const running = p.desiredStatus === 'RUNNING' && p.publicIp !== null && !!p.lastStartedAt;
  const uptime = running ? Math.max(0, Math.floor((now - Date.parse(p.lastStartedAt!)) / 1000)) : 0;
  return {
    id: p.id,
    name: p.name,
    imageName: p.imageName,
    desiredStatus: p.desiredStatus as PodStatus,
    costPerHr: p.costPerHr,
    adjustedCostPerHr: p.adjustedCostPerHr,
    containerDiskInGb: p.containerDiskInGb,
    volumeInGb: p.volumeInGb,
    volumeMountPath: p.volumeMountPath,
    gpuCount: p.gpuCount,
    memoryInGb: Math.round(p.memoryInGb),
    vcpuCount: p.vcpuCount,
    ports: p.ports.join(','),
    env: Object.entries(p.env).map(([key, value]) => `${key}=${value}`),
    dockerArgs: joinDockerArgs(p.dockerStartCmd),
    dockerId: null,
    podType: p.interruptible ? 'INTERRUPTABLE' : 'RESERVED',
    port: null,
    uptimeSeconds: uptime,
    lastStatusChange: p.lastStatusChange,
    lastStartedAt: p.lastStartedAt,
    createdAt: p.createdAt,
    machineId: p.machineId,
    // undefined: not asked for (PodsResolver fetches it when the query selects it).
    machine: p.machine ? machineInfo(p.id, p.machine) : undefined,
    runtime: running ? runtime(p, uptime) : null,
    templateId: p.templateId,
    networkVolumeId: p.networkVolumeId,
    networkVolume: p.networkVolume,
    endpointId: p.endpointId,
    aiApiId: p.aiApiId,
    slsVersion: p.slsVersion,
    cpuFlavorId: p.cpuFlavorId,
    containerRegistryAuthId: p.containerRegistryAuthId,
    consumerUserId: p.consumerUserId,
    locked: p.locked,
    interruptible: p.interruptible,
    volumeEncrypted: p.volumeEncrypted,
  };
}

/** Every exposed port at the Pod's address; the address is how clients reach it, so it counts as public. */
function runtime(p: Pod, uptimeInSeconds: number): PodRuntime {
  return {
    uptimeInSeconds,
    ports: p.ports.map((item) => {
      const [port, type] = item.split('/');
      return {
        ip: p.publicIp,
        isIpPublic: true,
        privatePort: Number(port),
        publicPort: p.portMappings[port] ?? Number(port),
        type,
      };
    }),
    gpus: Array.from({ length: p.gpuCount }, (_, i) => ({
      id: `${p.id}-gpu-${i}`,
      gpuUtilPercent: null,
      memoryUtilPercent: null,
    })),
    container: { cpuPercent: null, memoryPercent: null },
  };
}

function machineInfo(podId: string, m: PodMachine): PodMachineInfo {
  return {
    podHostId: podId,
    gpuTypeId: m.gpuTypeId,
    gpuDisplayName: m.gpuDisplayName,
    location: m.location,
    dataCenterId: m.dataCenterId,
    secureCloud: m.secureCloud,
    supportPublicIp: m.supportPublicIp,
    cpuCount: m.cpuCount,
    cpuTypeId: m.cpuTypeId,
    gpuAvailable: m.gpuAvailable,
    costPerHr: m.costPerHr,
    currentPricePerGpu: m.currentPricePerGpu,
    diskMBps: m.diskThroughputMBps,
    maxDownloadSpeedMbps: m.maxDownloadSpeedMbps,
    maxUploadSpeedMbps: m.maxUploadSpeedMbps,
    maintenanceStart: m.maintenanceStart,
    maintenanceEnd: m.maintenanceEnd,
    maintenanceNote: m.maintenanceNote,
    note: m.note,
  };
}

/** The template runpod-python names for every CPU Pod created without one; RunPod's, not ours. */
const PYTHON_DEFAULT_CPU_TEMPLATE = 'runpod-ubuntu';

/**
 * `podFindAndDeployOnDemand` / `deployCpuPod` input as REST's PodCreateDto, checked like a REST
 * body. "" means "not given" for strings (clients send `networkVolumeId: ""`); `min*` sizes raise
 * the catalogue's per-GPU sizes, never lower them.
 */
export function fromDeployInput(
  input: PodFindAndDeployOnDemandInput | DeployCpuPodInput | null | undefined,
  kind: 'gpu' | 'cpu',
): PodCreateDto {
  const i = (input ?? {}) as PodFindAndDeployOnDemandInput & DeployCpuPodInput;
  const problems: ErrorDetail[] = [];
  const text = (v: string | null | undefined) => (v ? v : undefined);
  const instances = kind === 'cpu' ? (i.instanceId ? [i.instanceId] : []) : strings(i.instanceIds);
  const cpu = kind === 'cpu' || i.computeType === 'CPU' || instances.length > 0;
  let templateId = text(i.templateId);
  if (kind === 'cpu' && templateId === PYTHON_DEFAULT_CPU_TEMPLATE && i.imageName)
    templateId = undefined;
  const gpuCount = i.gpuCount ?? undefined;
  const perGpu = (total: number | null | undefined) =>
    total ? Math.ceil(total / (gpuCount ?? 1)) : undefined;
  const flavors = instances.map((id) => parseInstanceId(id, problems));
  const out: Record<string, unknown> = {
    name: text(i.name),
    imageName: text(i.imageName),
    templateId,
    // Anything but GPU or CPU is refused by the DTO, naming the field.
    computeType: cpu ? 'CPU' : (i.computeType ?? 'GPU'),
    cloudType: i.cloudType === CloudTypeEnum.COMMUNITY ? 'COMMUNITY' : 'SECURE',
    containerDiskInGb: i.containerDiskInGb ?? undefined,
    volumeInGb: i.volumeInGb ?? undefined,
    volumeMountPath: text(i.volumeMountPath),
    dockerArgs: text(i.dockerArgs),
    networkVolumeId: text(i.networkVolumeId),
    containerRegistryAuthId: text(i.containerRegistryAuthId),
    dataCenterIds: i.dataCenterId ? [i.dataCenterId] : undefined,
    countryCodes: i.countryCode ? [i.countryCode] : undefined,
    supportPublicIp: i.supportPublicIp ?? undefined,
    minDownloadMbps: i.minDownload ?? undefined,
    minUploadMbps: i.minUpload ?? undefined,
  };
  if (cpu) {
    if (flavors.length) out.cpuFlavorIds = flavors.map((f) => f.flavor);
    if (flavors[0]) out.vcpuCount = flavors[0].vcpus;
  } else {
    const gpus = [text(i.gpuTypeId), ...strings(i.gpuTypeIdList)].filter(Boolean);
    if (gpus.length) out.gpuTypeIds = gpus;
    out.gpuCount = gpuCount;
    out.minVCPUPerGPU = perGpu(i.minVcpuCount);
    out.minRAMPerGPU = perGpu(i.minMemoryInGb);
    const cuda = strings(i.allowedCudaVersions);
    if (cuda.length) out.allowedCudaVersions = cuda;
  }
  if (i.ports) out.ports = portList(i.ports, problems);
  if (i.env) {
    const env = envMap(i.env, problems);
    if (env) out.env = env;
  }
  if (problems.length) throw invalid(problems);
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  const dto = plainToInstance(PodCreateDto, out);
  const errors = validateSync(dto, {
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  if (errors.length) throw invalid(flattenValidationErrors(errors).map(graphqlPath));
  return dto;
}

/** `cpu3c-2-4`: flavor cpu3c, 2 vCPUs (the memory follows from the flavor). */
function parseInstanceId(id: string, problems: ErrorDetail[]): { flavor: string; vcpus: number } {
  const match = /^([a-z0-9]+)-(\d+)(?:-\d+)?$/.exec(id);
  if (!match) {
    problems.push({
      path: 'instanceId',
      message: `instance id "${id}" must look like <flavor>-<vcpus>-<memory>, e.g. cpu3c-2-4`,
    });
    return { flavor: id, vcpus: 2 };
  }
  return { flavor: match[1], vcpus: Number(match[2]) };
}

function strings(list: Array<string | null> | null | undefined): string[] {
  return (list ?? []).filter((s): s is string => !!s);
}

/** REST field names in a validation problem, as the GraphQL input calls them. */
function graphqlPath(d: ErrorDetail): ErrorDetail {
  const names: Record<string, string> = {
    gpuTypeIds: 'gpuTypeId',
    cpuFlavorIds: 'instanceId',
    dataCenterIds: 'dataCenterId',
    countryCodes: 'countryCode',
    minDownloadMbps: 'minDownload',
    minUploadMbps: 'minUpload',
    minVCPUPerGPU: 'minVcpuCount',
    minRAMPerGPU: 'minMemoryInGb',
  };
  const [head, ...rest] = d.path.split('.');
  return names[head] ? { ...d, path: [names[head], ...rest].join('.') } : d;
}
