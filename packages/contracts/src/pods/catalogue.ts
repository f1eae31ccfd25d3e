/**
 * What the operator's machine and price catalogue offers, as the RunPod GraphQL API lists it
 * (`gpuTypes`, `dataCenters`, `serverlessGpuPools`). Prices are per GPU and hour.
 */
export interface GpuTypeOffer {
  id: string;
  displayName: string;
  /** NVIDIA, AMD... (from the id, or the Kubernetes resource name). */
  manufacturer: string;
  /** GPU memory, when the catalogue says. */
  memoryInGb: number | null;
  /** The serverless GPU pool it belongs to (`gpuIds` of an endpoint, e.g. ADA_24), if any. */
  pool: string | null;
  securePrice: number;
  communityPrice: number;
  secureSpotPrice: number;
  communitySpotPrice: number;
  oneWeekPrice: number;
  oneMonthPrice: number;
  threeMonthPrice: number;
  sixMonthPrice: number;
  /** The most GPUs of this type one Pod may ask for. */
  maxGpuCount: number;
}

/** The price of `gpuCount` GPUs of one type (RunPod's `lowestPrice`), and what comes with them. */
export interface GpuLowestPrice {
  gpuTypeId: string;
  gpuName: string;
  gpuCount: number;
  /** On-demand price for `gpuCount` GPUs per hour (secure, or community with `secureCloud: false`). */
  uninterruptablePrice: number;
  /** Interruptible (spot) price for `gpuCount` GPUs per hour. */
  minimumBidPrice: number;
  /** GB of memory and vCPUs a Pod with these GPUs gets. */
  minMemory: number;
  minVcpu: number;
  stockStatus: StockStatus;
}

/** Runplane does not track free capacity per data center: catalogue GPU types are offered as "High". */
export type StockStatus = 'High' | 'Medium' | 'Low';

export interface GpuAvailability {
  gpuTypeId: string;
  displayName: string;
  stockStatus: StockStatus;
  available: boolean;
}

/** A data center of this installation: the catalogue's default one and those its machines name. */
export interface DataCenterOffer {
  id: string;
  name: string;
  location: string;
  gpuAvailability: GpuAvailability[];
}
