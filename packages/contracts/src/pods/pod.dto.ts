import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { IsStringMap } from '../templates/template.dto.js';
import { HasNoNul, IsArgv } from '../validation/no-nul.js';
import type { Template } from '../templates/template.dto.js';

/** Spec "Limits": Pod name length. */
export const MAX_POD_NAME = 191;
/** The most GPUs one Pod or serverless worker may ask for. */
export const MAX_GPU_COUNT = 16;
export const POD_DESIRED_STATUSES = ['RUNNING', 'EXITED', 'TERMINATED'] as const;
export type PodDesiredStatus = (typeof POD_DESIRED_STATUSES)[number];
export const POD_COMPUTE_TYPES = ['GPU', 'CPU'] as const;
export const POD_CLOUD_TYPES = ['SECURE', 'COMMUNITY'] as const;

const PORT = /^\d{1,5}\/(http|tcp)$/;
const PORT_MESSAGE = 'each port must look like "8888/http" or "22/tcp"';
const NAME_MESSAGE = `name must be at most ${MAX_POD_NAME} characters`;

/**
 * Body of `PATCH /v1/pods/{id}` and `POST /v1/pods/{id}/update` (RunPod's PodUpdateInput).
 * A change to what runs (image, command, env, ports, disks) restarts a running Pod.
 */
export class PodUpdateDto {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_POD_NAME, { message: NAME_MESSAGE })
  @HasNoNul()
  name?: string;
  @IsOptional() @IsString() @MinLength(1) @HasNoNul() imageName?: string;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) containerDiskInGb?: number;
  @IsOptional() @IsString() @HasNoNul() containerRegistryAuthId?: string;
  @IsOptional()
  @IsArgv()
  dockerEntrypoint?: string[];
  @IsOptional()
  @IsArgv()
  dockerStartCmd?: string[];
  @IsOptional() @IsObject() @IsStringMap() env?: Record<string, string>;
  @IsOptional() @IsBoolean() globalNetworking?: boolean;
  @IsOptional() @IsBoolean() locked?: boolean;
  @IsOptional() @IsArray() @Matches(PORT, { each: true, message: PORT_MESSAGE }) ports?: string[];
  @IsOptional() @IsInt() @Min(0) @Max(10_000) volumeInGb?: number;
  @IsOptional()
  @IsString()
  @Matches(/^\//, { message: 'volumeMountPath must be an absolute path' })
  volumeMountPath?: string;
}

/**
 * Body of `POST /v1/pods` (RunPod's PodCreateInput; no field is required, but a Pod needs an
 * image: `imageName` or a `templateId` whose image it takes). Placement preferences that a
 * self-hosted installation has no use for (priorities, country codes, bandwidth minimums, CUDA
 * versions) are accepted and validated, not acted on.
 */
export class PodCreateDto extends PodUpdateDto {
  @IsOptional() @IsString() @MinLength(1) templateId?: string;
  @IsOptional() @IsIn(POD_COMPUTE_TYPES) computeType?: (typeof POD_COMPUTE_TYPES)[number];
  @IsOptional() @IsIn(POD_CLOUD_TYPES) cloudType?: (typeof POD_CLOUD_TYPES)[number];
  @IsOptional() @IsArray() @IsString({ each: true }) gpuTypeIds?: string[];
  @IsOptional() @IsIn(['availability', 'custom']) gpuTypePriority?: string;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_GPU_COUNT) gpuCount?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) cpuFlavorIds?: string[];
  @IsOptional() @IsIn(['availability', 'custom']) cpuFlavorPriority?: string;
  @IsOptional() @IsInt() @Min(1) @Max(512) vcpuCount?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) dataCenterIds?: string[];
  @IsOptional() @IsIn(['availability', 'custom']) dataCenterPriority?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) countryCodes?: string[];
  @IsOptional() @IsString() @MinLength(1) networkVolumeId?: string;
  @IsOptional() @IsBoolean() supportPublicIp?: boolean;
  @IsOptional() @IsBoolean() interruptible?: boolean;
  @IsOptional() @IsBoolean() volumeEncrypted?: boolean;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) minRAMPerGPU?: number;
  @IsOptional() @IsInt() @Min(0) @Max(512) minVCPUPerGPU?: number;
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  minDiskBandwidthMBps?: number;
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  minDownloadMbps?: number;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) minUploadMbps?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) allowedCudaVersions?: string[];
  /**
   * The start command as one shell-quoted string (runpodctl sends it): `dockerStartCmd` split like
   * a shell would. "" means "not given" (the template's command, else the image's).
   */
  @IsOptional() @IsString() @HasNoNul() dockerArgs?: string;
}

/** A GPU type as a Pod shows it. Prices are per GPU and hour. */
export interface PodGpu {
  id: string;
  count: number;
  displayName: string;
  securePrice: number;
  communityPrice: number;
  oneMonthPrice: number;
  threeMonthPrice: number;
  sixMonthPrice: number;
  oneWeekPrice: number;
  communitySpotPrice: number;
  secureSpotPrice: number;
}

/** The machine a Pod runs on (plus `memoryInGb`, the host's RAM). Unknown facts are null. */
export interface PodMachine {
  minPodGpuCount: number;
  gpuTypeId: string | null;
  gpuType: PodGpu | null;
  cpuCount: number;
  cpuTypeId: string;
  cpuType: {
    id: string;
    displayName: string;
    cores: number;
    threadsPerCore: number;
    groupId: string;
  };
  memoryInGb: number | null;
  location: string;
  dataCenterId: string;
  diskThroughputMBps: number | null;
  maxDownloadSpeedMbps: number | null;
  maxUploadSpeedMbps: number | null;
  supportPublicIp: boolean;
  secureCloud: boolean;
  maintenanceStart: string | null;
  maintenanceEnd: string | null;
  maintenanceNote: string | null;
  note: string;
  costPerHr: number;
  currentPricePerGpu: number;
  gpuAvailable: number;
  gpuDisplayName: string | null;
}

/** A network volume as a Pod shows it. */
export interface PodNetworkVolume {
  id: string;
  name: string;
  size: number;
  dataCenterId: string;
}

/** A savings plan as RunPod lists it. */
export interface PodSavingsPlan {
  id: string;
  podId: string;
  gpuTypeId: string;
  costPerHr: number;
  startTime: string;
  endTime: string;
}

/** A Pod as REST v1 returns it; absent optional values are null. */
export interface Pod {
  id: string;
  name: string;
  adjustedCostPerHr: number;
  costPerHr: number;
  aiApiId: string | null;
  endpointId: string | null;
  slsVersion: number | null;
  consumerUserId: string;
  containerDiskInGb: number;
  containerRegistryAuthId: string | null;
  cpuFlavorId: string | null;
  desiredStatus: PodDesiredStatus;
  dockerEntrypoint: string[];
  dockerStartCmd: string[];
  env: Record<string, string>;
  gpu: PodGpu | null;
  image: string;
  /** runpodctl reads `imageName` too. */
  imageName: string;
  interruptible: boolean;
  lastStartedAt: string | null;
  lastStatusChange: string;
  locked: boolean;
  machineId: string;
  memoryInGb: number;
  portMappings: Record<string, number>;
  ports: string[];
  publicIp: string | null;
  templateId: string | null;
  vcpuCount: number;
  volumeEncrypted: boolean;
  volumeInGb: number;
  volumeMountPath: string | null;
  networkVolumeId: string | null;
  gpuTypeId: string | null;
  gpuCount: number;
  createdAt: string;
  /** Only with `includeMachine=true`. */
  machine?: PodMachine;
  /** Only with `includeNetworkVolume=true` and when one is attached. */
  networkVolume?: PodNetworkVolume;
  /** Only with `includeSavingsPlans=true`; empty when none apply. */
  savingsPlans?: PodSavingsPlan[];
  /** Only with `includeTemplate=true`, when the Pod has a template the caller may read. */
  template?: Template;
}
