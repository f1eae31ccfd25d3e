import { Args, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GpuTypeOffer } from '@runplane/contracts';
import {
  DataCenterGql,
  GpuLowestPriceInput,
  GpuTypeFilter,
  GpuTypeGql,
  LowestPrice,
  ServerlessGpuPool,
} from './gpu.types.js';
import { CatalogueClient } from './management.clients.js';

/**
 * `gpuTypes`, `lowestPrice`, `dataCenters` and `serverlessGpuPools`: the operator's catalogue as
 * pod-rest prices it. Runplane does not track free capacity ahead of a start, so every GPU type
 * is offered, in every data center, as stock "High".
 */
@Resolver(() => GpuTypeGql)
export class CatalogueResolver {
  constructor(private readonly catalogue: CatalogueClient) {}

  @Query(() => [GpuTypeGql], { description: 'GPU types of the catalogue; `input` narrows by id.' })
  async gpuTypes(
    @Args('input', { type: () => GpuTypeFilter, nullable: true }) input: GpuTypeFilter | null,
  ): Promise<GpuTypeGql[]> {
    const ids = [input?.id, ...(input?.ids ?? [])].filter((id): id is string => !!id);
    return (await this.catalogue.gpuTypes(ids.length ? ids : undefined)).map(gpuType);
  }

  @ResolveField(() => LowestPrice, {
    nullable: true,
    description: 'What `gpuCount` GPUs of this type cost per hour (default 1 GPU).',
  })
  async lowestPrice(
    @Parent() gpu: GpuTypeGql,
    @Args('input', { type: () => GpuLowestPriceInput, nullable: true })
    input: GpuLowestPriceInput | null,
  ): Promise<LowestPrice | null> {
    const price = await this.catalogue.lowestPrice(
      gpu.id,
      input?.gpuCount ?? 1,
      input?.secureCloud ?? undefined,
    );
    if (!price) return null;
    return {
      gpuTypeId: price.gpuTypeId,
      gpuName: price.gpuName,
      uninterruptablePrice: price.uninterruptablePrice,
      minimumBidPrice: price.minimumBidPrice,
      minMemory: price.minMemory,
      minVcpu: price.minVcpu,
      stockStatus: price.stockStatus,
      rentedCount: 0,
      rentalPercentage: 0,
      totalCount: null,
      countryCode: null,
      supportPublicIp: true,
      minDisk: null,
      minDownload: null,
      minUpload: null,
    };
  }

  @Query(() => [DataCenterGql], { description: 'The data centers of this installation.' })
  async dataCenters(): Promise<DataCenterGql[]> {
    return (await this.catalogue.dataCenters()).map((dc) => ({
      id: dc.id,
      name: dc.name,
      location: dc.location,
      storageSupport: true,
      listed: true,
      gpuAvailability: dc.gpuAvailability.map((a) => ({
        id: a.gpuTypeId,
        gpuTypeId: a.gpuTypeId,
        displayName: a.displayName,
        gpuTypeDisplayName: a.displayName,
        stockStatus: a.stockStatus,
        available: a.available,
      })),
    }));
  }

  @Query(() => [ServerlessGpuPool], {
    description: 'Serverless GPU pools (what endpoint gpuIds name) and their GPU types.',
  })
  async serverlessGpuPools(): Promise<ServerlessGpuPool[]> {
    const pools = new Map<string, string[]>();
    for (const g of await this.catalogue.gpuTypes())
      if (g.pool) pools.set(g.pool, [...(pools.get(g.pool) ?? []), g.id]);
    return [...pools].map(([id, gpuTypeIds]) => ({ id, gpuTypeIds }));
  }
}

function gpuType(g: GpuTypeOffer): GpuTypeGql {
  return {
    id: g.id,
    displayName: g.displayName,
    manufacturer: g.manufacturer,
    memoryInGb: g.memoryInGb === null ? null : Math.round(g.memoryInGb),
    cudaCores: null,
    secureCloud: true,
    communityCloud: true,
    securePrice: g.securePrice,
    communityPrice: g.communityPrice,
    secureSpotPrice: g.secureSpotPrice,
    communitySpotPrice: g.communitySpotPrice,
    oneWeekPrice: g.oneWeekPrice,
    oneMonthPrice: g.oneMonthPrice,
    threeMonthPrice: g.threeMonthPrice,
    sixMonthPrice: g.sixMonthPrice,
    maxGpuCount: g.maxGpuCount,
    maxGpuCountSecureCloud: g.maxGpuCount,
    maxGpuCountCommunityCloud: g.maxGpuCount,
    minPodGpuCount: 1,
    pool: g.pool,
  };
}
