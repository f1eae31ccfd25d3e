import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope, type Principal } from '../auth/principal.js';
import type { DataCenterOffer, GpuLowestPrice, GpuTypeOffer } from '../pods/catalogue.js';
import type { NetworkVolume } from '../pods/network-volume.dto.js';
import { MAX_GPU_COUNT, PodCreateDto, type Pod } from '../pods/pod.dto.js';
import { defineRpc } from './definitions.js';
import { OwnedRequest, type Ack } from './scheduler.js';

/**
 * Pod operations of REST v1 `/v1/pods` offered over the bus, so that another door to them (the
 * GraphQL API) runs the very same rules in pod-rest. They carry the caller's whole principal:
 * what a key may do with Pods can depend on more than its user.
 */
export class PrincipalDto implements Principal {
  @IsString() @IsNotEmpty() userId!: string;
  @IsString() @IsNotEmpty() keyId!: string;
  @IsIn(API_KEY_SCOPES) scope!: ApiKeyScope;
  @IsOptional() @IsString() endpointId?: string | null;
}

export class PrincipalRequest {
  @IsObject() @ValidateNested() @Type(() => PrincipalDto) principal!: PrincipalDto;
}

export class CreatePodRequest extends PrincipalRequest {
  @IsObject() @ValidateNested() @Type(() => PodCreateDto) pod!: PodCreateDto;
}

/** Which optional parts of a Pod to render (REST's include flags). */
export class PodIncludeFlags extends PrincipalRequest {
  @IsOptional() @IsBoolean() includeMachine?: boolean;
  @IsOptional() @IsBoolean() includeNetworkVolume?: boolean;
  /** Serverless worker Pods too. */
  @IsOptional() @IsBoolean() includeWorkers?: boolean;
}

export class ListPodsRequest extends PodIncludeFlags {
  /** Only this endpoint's worker Pods. */
  @IsOptional() @IsString() @IsNotEmpty() endpointId?: string;
}

export class GetPodRequest extends PodIncludeFlags {
  @IsString() @IsNotEmpty() podId!: string;
}

export class PodScopedRequest extends PrincipalRequest {
  @IsString() @IsNotEmpty() podId!: string;
}

export class GpuTypesRequest {
  /** Only these GPU types (unknown ids are left out); all when absent. */
  @IsOptional() @IsArray() @IsString({ each: true }) ids?: string[];
}

export class LowestPriceRequest {
  @IsString() @IsNotEmpty() gpuTypeId!: string;
  @IsInt() @Min(1) @Max(MAX_GPU_COUNT) gpuCount!: number;
  /** false: community prices. */
  @IsOptional() @IsBoolean() secureCloud?: boolean;
}

/** Requests answered by pod-rest for Pods, its catalogue and network volumes. */
export const PodApiRpc = {
  createPod: defineRpc<CreatePodRequest, Pod>('pod-rest', 'pods.create', CreatePodRequest),
  listPods: defineRpc<ListPodsRequest, Pod[]>('pod-rest', 'pods.list', ListPodsRequest),
  getPod: defineRpc<GetPodRequest, Pod>('pod-rest', 'pods.get', GetPodRequest),
  startPod: defineRpc<PodScopedRequest, Pod>('pod-rest', 'pods.start', PodScopedRequest),
  stopPod: defineRpc<PodScopedRequest, Pod>('pod-rest', 'pods.stop', PodScopedRequest),
  deletePod: defineRpc<PodScopedRequest, Ack>('pod-rest', 'pods.delete', PodScopedRequest),
  gpuTypes: defineRpc<GpuTypesRequest, GpuTypeOffer[]>(
    'pod-rest',
    'catalogue.gpu-types',
    GpuTypesRequest,
  ),
  /** null when the catalogue has no such GPU type. */
  lowestPrice: defineRpc<LowestPriceRequest, GpuLowestPrice | null>(
    'pod-rest',
    'catalogue.lowest-price',
    LowestPriceRequest,
  ),
  dataCenters: defineRpc<object, DataCenterOffer[]>('pod-rest', 'catalogue.data-centers'),
  listNetworkVolumes: defineRpc<OwnedRequest, NetworkVolume[]>(
    'pod-rest',
    'network-volumes.list',
    OwnedRequest,
  ),
} as const;
