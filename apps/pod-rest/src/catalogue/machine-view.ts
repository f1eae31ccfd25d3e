import type { PodMachine } from '@runplane/contracts';
import type { MachineFacts } from '../compute/compute-provider.js';
import type { Catalogue } from './catalogue.schema.js';
import { findGpuType, gpuObject, gpuPrice } from './pricing.js';

export interface MachinePod {
  computeType: string;
  gpuTypeId: string | null;
  cloudType: string;
  interruptible: boolean;
}

/**
 * The machine a Pod runs on: what the provider sees of the host (CPU, memory, GPUs) and what the
 * operator wrote about it in the catalogue (location, data center, bandwidth, maintenance), priced
 * from the catalogue. Facts nobody knows are null rather than invented.
 */
export function machineView(
  catalogue: Catalogue,
  machineId: string,
  facts: MachineFacts | null,
  pod: MachinePod,
): PodMachine {
  const entry = catalogue.machines.find((m) => m.id === machineId);
  const detected = facts?.gpus ?? [];
  const hostGpu = detected.length
    ? (findGpuType(catalogue, detected[0].name)?.id ?? detected[0].name)
    : null;
  const gpuTypeId = hostGpu ?? (pod.computeType === 'GPU' ? pod.gpuTypeId : null);
  const gpuType = findGpuType(catalogue, gpuTypeId);
  const sameType = detected.filter(
    (g) => (findGpuType(catalogue, g.name)?.id ?? g.name) === gpuTypeId,
  ).length;
  const pricePerGpu = gpuPrice(gpuType, pod.cloudType, pod.interruptible);
  const cpuModel = facts?.cpuModel ?? 'unknown';
  const cpuCount = facts?.cpuCount ?? 0;
  const threadsPerCore = facts?.threadsPerCore ?? 1;
  const cpuPrice =
    catalogue.cpuFlavors.find((f) => f.id === catalogue.defaults.cpuFlavorId)?.pricePerVcpu ?? 0;
  return {
    minPodGpuCount: gpuTypeId ? 1 : 0,
    gpuTypeId,
    gpuType: gpuTypeId ? gpuObject(catalogue, gpuTypeId, sameType) : null,
    cpuCount,
    cpuTypeId: cpuModel,
    cpuType: {
      id: cpuModel,
      displayName: cpuModel,
      cores: Math.max(1, Math.round(cpuCount / threadsPerCore)),
      threadsPerCore,
      groupId: cpuGroup(cpuModel),
    },
    memoryInGb: facts?.memoryInGb ?? null,
    location: entry?.location ?? facts?.location ?? catalogue.defaults.location,
    dataCenterId: entry?.dataCenterId ?? facts?.dataCenterId ?? catalogue.defaults.dataCenterId,
    diskThroughputMBps: entry?.diskThroughputMBps ?? null,
    maxDownloadSpeedMbps: entry?.maxDownloadSpeedMbps ?? null,
    maxUploadSpeedMbps: entry?.maxUploadSpeedMbps ?? null,
    supportPublicIp: entry?.supportPublicIp ?? false,
    secureCloud: entry?.secureCloud ?? true,
    maintenanceStart: entry?.maintenanceStart
      ? new Date(entry.maintenanceStart).toISOString()
      : null,
    maintenanceEnd: entry?.maintenanceEnd ? new Date(entry.maintenanceEnd).toISOString() : null,
    maintenanceNote: entry?.maintenanceNote ?? null,
    note: entry?.note ?? '',
    // The whole machine at current prices: its GPUs, or its vCPUs at the default CPU flavor's price.
    costPerHr:
      Math.round((sameType ? pricePerGpu * sameType : cpuPrice * cpuCount) * 10_000) / 10_000,
    currentPricePerGpu: pricePerGpu,
    gpuAvailable: sameType,
    gpuDisplayName: gpuType?.displayName ?? gpuTypeId,
  };
}

function cpuGroup(model: string): string {
  const m = model.toLowerCase();
  if (m.includes('intel')) return 'Intel';
  if (m.includes('amd')) return 'AMD';
  if (m.includes('arm') || m.includes('neoverse') || m.includes('graviton') || m.includes('apple'))
    return 'ARM';
  return 'Other';
}
