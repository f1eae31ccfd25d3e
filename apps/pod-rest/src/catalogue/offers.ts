import {
  MAX_GPU_COUNT,
  type DataCenterOffer,
  type GpuLowestPrice,
  type GpuTypeOffer,
} from '@runplane/contracts';
import type { Catalogue, CatalogueGpuType } from './catalogue.schema.js';
import { findGpuType, gpuPrice, sizePod } from './pricing.js';

/**
 * What the catalogue offers, in the shapes of RunPod's GraphQL `gpuTypes`, `lowestPrice` and
 * `dataCenters`: pure functions of the catalogue, unit-tested with the pricing rules they use.
 */

export function gpuTypeOffers(catalogue: Catalogue, ids?: string[]): GpuTypeOffer[] {
  const types = ids
    ? catalogue.gpuTypes.filter((g) => ids.some((id) => findGpuType(catalogue, id) === g))
    : catalogue.gpuTypes;
  return types.map((g) => ({
    id: g.id,
    displayName: g.displayName,
    manufacturer: manufacturer(g),
    memoryInGb: g.memoryInGb ?? null,
    pool: g.pool ?? null,
    securePrice: g.prices.secure,
    communityPrice: g.prices.community,
    secureSpotPrice: g.prices.secureSpot,
    communitySpotPrice: g.prices.communitySpot,
    oneWeekPrice: g.prices.oneWeek,
    oneMonthPrice: g.prices.oneMonth,
    threeMonthPrice: g.prices.threeMonth,
    sixMonthPrice: g.prices.sixMonth,
    maxGpuCount: MAX_GPU_COUNT,
  }));
}

/**
 * `gpuCount` GPUs of one type, priced like a Pod with them (on demand and interruptible) and sized
 * like one (memory, vCPUs). Every catalogue GPU type is offered: Runplane does not track free
 * capacity ahead of a start (a workload that cannot get its GPUs waits).
 */
export function lowestPrice(
  catalogue: Catalogue,
  request: { gpuTypeId: string; gpuCount: number; secureCloud?: boolean },
): GpuLowestPrice | null {
  const g = findGpuType(catalogue, request.gpuTypeId);
  if (!g) return null;
  const cloud = request.secureCloud === false ? 'COMMUNITY' : 'SECURE';
  const size = sizePod(catalogue, { gpuTypeIds: [g.id], gpuCount: request.gpuCount });
  const times = (price: number) => Math.round(price * request.gpuCount * 10_000) / 10_000;
  return {
    gpuTypeId: g.id,
    gpuName: g.displayName,
    gpuCount: request.gpuCount,
    uninterruptablePrice: times(gpuPrice(g, cloud, false)),
    minimumBidPrice: times(gpuPrice(g, cloud, true)),
    minMemory: size.memoryInGb,
    minVcpu: size.vcpuCount,
    stockStatus: 'High',
  };
}

/** The data centers of this installation: the default one, then those machines and volumes name. */
export function dataCenterIds(catalogue: Catalogue): string[] {
  return [
    ...new Set([
      catalogue.defaults.dataCenterId,
      ...catalogue.machines.map((m) => m.dataCenterId),
      ...catalogue.networkVolumes.map((v) => v.dataCenterId),
    ]),
  ].filter((id): id is string => !!id);
}

export function dataCenterOffers(catalogue: Catalogue): DataCenterOffer[] {
  return dataCenterIds(catalogue).map((id) => ({
    id,
    name: id,
    location:
      catalogue.machines.find((m) => m.dataCenterId === id && m.location)?.location ??
      catalogue.defaults.location,
    gpuAvailability: catalogue.gpuTypes.map((g) => ({
      gpuTypeId: g.id,
      displayName: g.displayName,
      stockStatus: 'High' as const,
      available: true,
    })),
  }));
}

function manufacturer(g: CatalogueGpuType): string {
  if (/^amd\b/i.test(g.id) || g.resource?.startsWith('amd.com/')) return 'AMD';
  if (/^intel\b/i.test(g.id) || g.resource?.startsWith('gpu.intel.com/')) return 'Intel';
  return 'Nvidia';
}
