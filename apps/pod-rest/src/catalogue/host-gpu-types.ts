import type { HostGpu } from '../gpus/gpu-inventory.js';
import type { Catalogue, CatalogueGpuType } from './catalogue.schema.js';
import { findGpuType } from './pricing.js';

const FREE = {
  secure: 0,
  community: 0,
  secureSpot: 0,
  communitySpot: 0,
  oneWeek: 0,
  oneMonth: 0,
  threeMonth: 0,
  sixMonth: 0,
};

/**
 * The catalogue as this host's GPUs make it (docs/compute.md, "GPUs"): a GPU model of the host the
 * operator's catalogue does not know (by id, display name or alias) is added as a GPU type named as
 * nvidia-smi names it, sized like the default GPU type and priced 0 until the operator lists it;
 * and when the catalogue's default GPU type is not on the host, the host's first GPU becomes the
 * default, so a Pod that names no GPU type gets, shows and is priced as what it runs on.
 */
export function withHostGpus(catalogue: Catalogue, gpus: readonly HostGpu[]): Catalogue {
  if (!gpus.length) return catalogue;
  const fallback = findGpuType(catalogue, catalogue.defaults.gpuTypeId);
  const added: CatalogueGpuType[] = [];
  const hostTypeIds: string[] = [];
  for (const gpu of gpus) {
    let type = findGpuType(catalogue, gpu.name) ?? added.find((t) => t.id === gpu.name);
    if (!type) {
      type = {
        id: gpu.name,
        displayName: gpu.name.replace(/^NVIDIA (GeForce )?/, '') || gpu.name,
        ...(gpu.memoryInGb !== null ? { memoryInGb: Math.round(gpu.memoryInGb) } : {}),
        ramPerGpuInGb: fallback?.ramPerGpuInGb ?? 0,
        vcpuPerGpu: fallback?.vcpuPerGpu ?? 1,
        prices: { ...FREE },
      };
      added.push(type);
    }
    hostTypeIds.push(type.id);
  }
  const defaultOnHost = hostTypeIds.includes(fallback?.id ?? '');
  return {
    ...catalogue,
    gpuTypes: [...catalogue.gpuTypes, ...added],
    defaults: defaultOnHost
      ? catalogue.defaults
      : { ...catalogue.defaults, gpuTypeId: hostTypeIds[0] },
  };
}
