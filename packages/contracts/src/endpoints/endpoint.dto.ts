import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { HasNoNul } from '../validation/no-nul.js';
import { JOB_LIMITS } from '../jobs/limits.js';
import { IsStringMap } from '../templates/template.dto.js';
import type { EndpointWaiting } from './endpoint-operations.js';

export const SCALER_TYPES = ['QUEUE_DELAY', 'REQUEST_COUNT'] as const;
export type ScalerType = (typeof SCALER_TYPES)[number];

/** Defaults of RunPod REST v1 EndpointCreateInput. */
export const ENDPOINT_DEFAULTS = {
  computeType: 'GPU' as 'GPU' | 'CPU',
  gpuCount: 1,
  workersMin: 0,
  workersMax: 3,
  idleTimeout: 5,
  scalerType: 'QUEUE_DELAY' as ScalerType,
  scalerValue: 4,
  executionTimeoutMs: JOB_LIMITS.executionTimeout.default,
};

/** RunPod endpoint fields that Runplane accepts in a body and does not keep. */
export const ENDPOINT_FIELDS_NOT_USED = [
  'flashboot',
  'networkVolumeIds',
  'allowedCudaVersions',
  'minCudaVersion',
] as const;

/** Fields an endpoint update may change (RunPod EndpointUpdateInput: all optional). */
export class EndpointUpdateDto {
  @IsOptional() @IsString() @MaxLength(191) @HasNoNul() name?: string;
  @IsOptional() @IsString() @MinLength(1) templateId?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) gpuTypeIds?: string[];
  @IsOptional() @IsInt() @Min(1) @Max(16) gpuCount?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) cpuFlavorIds?: string[];
  @IsOptional() @IsInt() @Min(1) vcpuCount?: number;
  @IsOptional() @IsInt() @Min(0) @Max(1000) workersMin?: number;
  @IsOptional() @IsInt() @Min(0) @Max(1000) workersMax?: number;
  @IsOptional() @IsInt() @Min(1) @Max(3600) idleTimeout?: number;
  @IsOptional()
  @IsInt()
  @Min(JOB_LIMITS.executionTimeout.min)
  @Max(JOB_LIMITS.executionTimeout.max)
  executionTimeoutMs?: number;
  @IsOptional() @IsIn(SCALER_TYPES) scalerType?: ScalerType;
  @IsOptional() @IsInt() @Min(1) scalerValue?: number;
  @IsOptional() @IsString() networkVolumeId?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) dataCenterIds?: string[];
  /**
   * Variables its workers get on top of the template's (`{{ RUNPOD_SECRET_* }}` references
   * resolved like the template's); a change is a rolling release.
   */
  @IsOptional() @IsObject() @IsStringMap() env?: Record<string, string>;
  // RunPod fields with no meaning on a self-hosted installation (ENDPOINT_FIELDS_NOT_USED):
  // accepted, since RunPod's clients send them, and validated, but not kept.
  @IsOptional() @IsBoolean() flashboot?: boolean;
  @IsOptional() @IsArray() @IsString({ each: true }) networkVolumeIds?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) allowedCudaVersions?: string[];
  @IsOptional() @IsString() minCudaVersion?: string;
}

/** Body of `POST /v1/endpoints` (RunPod EndpointCreateInput: only templateId is required). */
export class EndpointCreateDto extends EndpointUpdateDto {
  // `@ValidateIf(() => true)` replaces the parent's inherited @IsOptional() (class-validator keeps it otherwise).
  @ValidateIf(() => true)
  @IsDefined({ message: 'templateId is required' })
  @IsString()
  @MinLength(1)
  declare templateId: string;
  @IsOptional() @IsIn(['GPU', 'CPU']) computeType?: 'GPU' | 'CPU';
}

/** An endpoint as REST v1 returns it (RunPod's "Endpoint"). */
export interface Endpoint {
  id: string;
  name: string;
  templateId: string;
  userId: string;
  /** Bumped by every template or configuration change that needs new workers (rolling release). */
  version: number;
  createdAt: string;
  computeType: 'GPU' | 'CPU';
  gpuTypeIds: string[];
  gpuCount: number;
  cpuFlavorIds: string[];
  vcpuCount: number;
  dataCenterIds: string[];
  env: Record<string, string>;
  executionTimeoutMs: number;
  idleTimeout: number;
  scalerType: ScalerType;
  scalerValue: number;
  workersMin: number;
  workersMax: number;
  networkVolumeId?: string | null;
  /** In get and list, when jobs are queued: how many, and why they wait. */
  waiting?: EndpointWaiting;
}

/** `/health`: job counts, and worker counts by state. */
export interface HealthRecord {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: {
    idle: number;
    initializing: number;
    ready: number;
    running: number;
    throttled: number;
    unhealthy: number;
  };
}
