import { Field, Float, InputType, Int, ObjectType } from '@nestjs/graphql';

// The catalogue as RunPod's GraphQL API lists it: `gpuTypes` (with `lowestPrice`), `dataCenters`,
// `serverlessGpuPools`. Prices are per hour, from the operator's catalogue.

@ObjectType('LowestPrice', { description: 'The price of `gpuCount` GPUs of the type (per hour).' })
export class LowestPrice {
  @Field(() => String) gpuTypeId!: string;
  @Field(() => String) gpuName!: string;
  @Field(() => Float, { description: 'On demand: all the GPUs, per hour.' })
  uninterruptablePrice!: number;
  @Field(() => Float, { description: 'Interruptible (spot): all the GPUs, per hour.' })
  minimumBidPrice!: number;
  @Field(() => Float, { description: 'GB of memory a Pod with these GPUs gets.' })
  minMemory!: number;
  @Field(() => Int, { description: 'vCPUs a Pod with these GPUs gets.' }) minVcpu!: number;
  @Field(() => String, { description: 'Capacity is not tracked ahead of a start: "High".' })
  stockStatus!: string;
  @Field(() => Int, { description: 'Always 0.' }) rentedCount!: number;
  @Field(() => Float, { description: 'Always 0.' }) rentalPercentage!: number;
  @Field(() => Int, { nullable: true, description: 'Not tracked: null.' }) totalCount!:
    number | null;
  @Field(() => String, { nullable: true, description: 'Always null.' }) countryCode!: string | null;
  @Field(() => Boolean) supportPublicIp!: boolean;
  @Field(() => Int, { nullable: true, description: 'Always null.' }) minDisk!: number | null;
  @Field(() => Int, { nullable: true, description: 'Always null.' }) minDownload!: number | null;
  @Field(() => Int, { nullable: true, description: 'Always null.' }) minUpload!: number | null;
}

@ObjectType('GpuType', { description: 'A GPU type of the catalogue.' })
export class GpuTypeGql {
  @Field(() => String) id!: string;
  @Field(() => String) displayName!: string;
  @Field(() => String) manufacturer!: string;
  @Field(() => Int, { nullable: true }) memoryInGb!: number | null;
  @Field(() => Int, { nullable: true, description: 'Not in the catalogue: null.' })
  cudaCores!: number | null;
  @Field(() => Boolean) secureCloud!: boolean;
  @Field(() => Boolean) communityCloud!: boolean;
  @Field(() => Float) securePrice!: number;
  @Field(() => Float) communityPrice!: number;
  @Field(() => Float) secureSpotPrice!: number;
  @Field(() => Float) communitySpotPrice!: number;
  @Field(() => Float) oneWeekPrice!: number;
  @Field(() => Float) oneMonthPrice!: number;
  @Field(() => Float) threeMonthPrice!: number;
  @Field(() => Float) sixMonthPrice!: number;
  @Field(() => Int) maxGpuCount!: number;
  @Field(() => Int) maxGpuCountSecureCloud!: number;
  @Field(() => Int) maxGpuCountCommunityCloud!: number;
  @Field(() => Int) minPodGpuCount!: number;
  @Field(() => String, {
    nullable: true,
    description: 'Its serverless GPU pool (endpoint gpuIds).',
  })
  pool!: string | null;
}

@InputType('GpuTypeFilter')
export class GpuTypeFilter {
  @Field(() => String, { nullable: true }) id?: string | null;
  @Field(() => [String], { nullable: 'itemsAndList' }) ids?: Array<string | null> | null;
}

@InputType('GpuLowestPriceInput', {
  description:
    'Only gpuCount (default 1) and secureCloud (false: community prices) change the answer.',
})
export class GpuLowestPriceInput {
  @Field(() => Int, { nullable: true }) gpuCount?: number | null;
  @Field(() => Boolean, { nullable: true }) secureCloud?: boolean | null;
  @Field(() => Int, { nullable: true }) minMemoryInGb?: number | null;
  @Field(() => Int, { nullable: true }) minVcpuCount?: number | null;
  @Field(() => Int, { nullable: true }) totalDisk?: number | null;
  @Field(() => Int, { nullable: true }) minDisk?: number | null;
  @Field(() => Int, { nullable: true }) minDownload?: number | null;
  @Field(() => Int, { nullable: true }) minUpload?: number | null;
  @Field(() => String, { nullable: true }) countryCode?: string | null;
  @Field(() => String, { nullable: true }) dataCenterId?: string | null;
  @Field(() => Boolean, { nullable: true }) supportPublicIp?: boolean | null;
  @Field(() => Boolean, { nullable: true }) includeAiApi?: boolean | null;
  @Field(() => String, { nullable: true }) cudaVersion?: string | null;
  @Field(() => [String], { nullable: 'itemsAndList' }) allowedCudaVersions?: Array<
    string | null
  > | null;
  @Field(() => [String], { nullable: 'itemsAndList' }) compliance?: Array<string | null> | null;
}

@ObjectType('GpuAvailability')
export class GpuAvailabilityGql {
  @Field(() => String) id!: string;
  @Field(() => String) gpuTypeId!: string;
  @Field(() => String) displayName!: string;
  @Field(() => String) gpuTypeDisplayName!: string;
  @Field(() => String) stockStatus!: string;
  @Field(() => Boolean) available!: boolean;
}

@ObjectType('DataCenter', { description: 'A data center of this installation.' })
export class DataCenterGql {
  @Field(() => String) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) location!: string;
  @Field(() => Boolean) storageSupport!: boolean;
  @Field(() => Boolean) listed!: boolean;
  @Field(() => [GpuAvailabilityGql]) gpuAvailability!: GpuAvailabilityGql[];
}

@ObjectType('ServerlessGpuPool', {
  description: 'A serverless GPU pool: what endpoint gpuIds name.',
})
export class ServerlessGpuPool {
  @Field(() => String) id!: string;
  @Field(() => [String]) gpuTypeIds!: string[];
}
