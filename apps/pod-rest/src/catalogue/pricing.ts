import { RunplaneError, type PodGpu, type PodSavingsPlan } from '@runplane/contracts';
import type { Catalogue, CatalogueGpuType, CatalogueSavingsPlan } from './catalogue.schema.js';

/**
 * Sizing and prices of Pods from the operator's catalogue: pure functions of the catalogue and a
 * Pod's hardware, so every rule is unit-tested.
 */
export interface PodHardware {
  computeType: 'GPU' | 'CPU';
  /** GPU Pods only. */
  gpuTypeId: string | null;
  /** 0 for CPU Pods. */
  gpuCount: number;
  /** CPU Pods only. */
  cpuFlavorId: string | null;
  vcpuCount: number;
  memoryInGb: number;
}

export interface HardwareRequest {
  computeType?: 'GPU' | 'CPU';
  gpuTypeIds?: string[];
  gpuCount?: number;
  cpuFlavorIds?: string[];
  vcpuCount?: number;
  minRAMPerGPU?: number;
  minVCPUPerGPU?: number;
}

export interface PricedPod {
  id: string;
  ownerId: string;
  computeType: string;
  gpuTypeId: string | null;
  gpuCount: number;
  cpuFlavorId: string | null;
  vcpuCount: number;
  cloudType: string;
  interruptible: boolean;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** The GPU type called `name` (its id, display name or an alias; case-insensitive). */
export function findGpuType(
  catalogue: Catalogue,
  name: string | null | undefined,
): CatalogueGpuType | undefined {
  if (!name) return undefined;
  const n = name.trim().toLowerCase();
  return catalogue.gpuTypes.find(
    (g) =>
      g.id.toLowerCase() === n ||
      g.displayName.toLowerCase() === n ||
      g.aliases?.some((a) => a.toLowerCase() === n),
  );
}

/**
 * What a Pod gets (RunPod's defaults: GPU, 1 GPU; CPU Pods 2 vCPUs): the first requested GPU
 * type (or CPU flavor) the catalogue knows, else the catalogue default when none was named. With
 * `strict` an unknown choice is a 400 naming the field; without (serverless workers, whose endpoint
 * may name any RunPod GPU) an unknown GPU type is kept as given and priced 0.
 */
export function sizePod(
  catalogue: Catalogue,
  request: HardwareRequest,
  strict = true,
): PodHardware {
  if (request.computeType === 'CPU') {
    const wanted = request.cpuFlavorIds?.length
      ? request.cpuFlavorIds
      : [catalogue.defaults.cpuFlavorId];
    const flavor = wanted.map((id) => catalogue.cpuFlavors.find((f) => f.id === id)).find(Boolean);
    if (!flavor && strict) {
      throw RunplaneError.badRequest(
        `none of the cpuFlavorIds ${JSON.stringify(wanted)} is offered here (offered: ${catalogue.cpuFlavors.map((f) => f.id).join(', ')})`,
        [{ path: 'cpuFlavorIds', message: 'no offered CPU flavor' }],
      );
    }
    const vcpuCount = request.vcpuCount ?? 2;
    return {
      computeType: 'CPU',
      gpuTypeId: null,
      gpuCount: 0,
      cpuFlavorId: flavor?.id ?? wanted[0],
      vcpuCount,
      memoryInGb: round(vcpuCount * (flavor?.ramPerVcpuInGb ?? 2)),
    };
  }
  const wanted = request.gpuTypeIds?.length ? request.gpuTypeIds : [catalogue.defaults.gpuTypeId];
  const gpu = wanted.map((id) => findGpuType(catalogue, id)).find(Boolean);
  if (!gpu && strict) {
    throw RunplaneError.badRequest(
      `none of the gpuTypeIds ${JSON.stringify(wanted)} is offered here (offered: ${catalogue.gpuTypes.map((g) => g.id).join(', ')})`,
      [{ path: 'gpuTypeIds', message: 'no offered GPU type' }],
    );
  }
  const gpuCount = request.gpuCount ?? 1;
  const vcpuPerGpu = Math.max(gpu?.vcpuPerGpu ?? 1, request.minVCPUPerGPU ?? 0);
  const ramPerGpu = Math.max(gpu?.ramPerGpuInGb ?? 8, request.minRAMPerGPU ?? 0);
  return {
    computeType: 'GPU',
    gpuTypeId: gpu?.id ?? wanted[0],
    gpuCount,
    cpuFlavorId: null,
    vcpuCount: request.vcpuCount ?? vcpuPerGpu * gpuCount,
    memoryInGb: round(ramPerGpu * gpuCount),
  };
}

/** The GPU object for `count` GPUs of the type (prices per GPU; zeros for a type the catalogue lacks). */
export function gpuObject(catalogue: Catalogue, gpuTypeId: string, count: number): PodGpu {
  const g = findGpuType(catalogue, gpuTypeId);
  const p = g?.prices;
  return {
    id: g?.id ?? gpuTypeId,
    count,
    displayName: g?.displayName ?? gpuTypeId,
    securePrice: p?.secure ?? 0,
    communityPrice: p?.community ?? 0,
    oneMonthPrice: p?.oneMonth ?? 0,
    threeMonthPrice: p?.threeMonth ?? 0,
    sixMonthPrice: p?.sixMonth ?? 0,
    oneWeekPrice: p?.oneWeek ?? 0,
    communitySpotPrice: p?.communitySpot ?? 0,
    secureSpotPrice: p?.secureSpot ?? 0,
  };
}

/** Price per GPU and hour for the cloud type; interruptible (spot) Pods pay the spot price. */
export function gpuPrice(
  g: CatalogueGpuType | undefined,
  cloudType: string,
  interruptible: boolean,
): number {
  if (!g) return 0;
  const community = cloudType === 'COMMUNITY';
  if (interruptible) return community ? g.prices.communitySpot : g.prices.secureSpot;
  return community ? g.prices.community : g.prices.secure;
}

/** `costPerHr`: GPUs × their price, or vCPUs × the flavor's price. Storage is not charged. */
export function podCost(catalogue: Catalogue, pod: PricedPod): number {
  if (pod.computeType === 'CPU') {
    const flavor = catalogue.cpuFlavors.find((f) => f.id === pod.cpuFlavorId);
    return round((flavor?.pricePerVcpu ?? 0) * pod.vcpuCount);
  }
  return round(
    gpuPrice(findGpuType(catalogue, pod.gpuTypeId), pod.cloudType, pod.interruptible) *
      pod.gpuCount,
  );
}

/** Savings plans that apply to the Pod and have not ended (active or upcoming), earliest first. */
export function plansFor(catalogue: Catalogue, pod: PricedPod, now: Date): CatalogueSavingsPlan[] {
  if (pod.computeType !== 'GPU' || !pod.gpuTypeId) return [];
  const gpu = findGpuType(catalogue, pod.gpuTypeId)?.id ?? pod.gpuTypeId;
  return catalogue.savingsPlans
    .filter(
      (p) =>
        p.userId === pod.ownerId &&
        (!p.podId || p.podId === pod.id) &&
        p.gpuTypeId === gpu &&
        Date.parse(p.endTime) > now.getTime(),
    )
    .sort((a, b) => Date.parse(a.startTime) - Date.parse(b.startTime));
}

/** `adjustedCostPerHr`: the lowest price of the plans active now (per GPU × GPUs), else `costPerHr`. */
export function adjustedCost(catalogue: Catalogue, pod: PricedPod, now: Date): number {
  const cost = podCost(catalogue, pod);
  const active = plansFor(catalogue, pod, now).filter(
    (p) => Date.parse(p.startTime) <= now.getTime(),
  );
  return active.reduce((best, p) => Math.min(best, round(p.costPerHr * pod.gpuCount)), cost);
}

export function savingsPlanView(plan: CatalogueSavingsPlan, podId: string): PodSavingsPlan {
  return {
    id: plan.id,
    podId,
    gpuTypeId: plan.gpuTypeId,
    costPerHr: plan.costPerHr,
    startTime: new Date(plan.startTime).toISOString(),
    endTime: new Date(plan.endTime).toISOString(),
  };
}
