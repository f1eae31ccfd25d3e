import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { GpuTypesRequest, LowestPriceRequest, PodApiRpc } from '@runplane/contracts';
import { CatalogueService } from './catalogue.service.js';
import { dataCenterOffers, gpuTypeOffers, lowestPrice } from './offers.js';

/** The catalogue's offer for GraphQL `gpuTypes` and `dataCenters` (template-graphql asks). */
@Controller()
export class CatalogueBusController {
  constructor(private readonly catalogue: CatalogueService) {}

  @OnRpc(PodApiRpc.gpuTypes)
  gpuTypes(@Payload() request: GpuTypesRequest) {
    return gpuTypeOffers(this.catalogue.get(), request.ids);
  }

  @OnRpc(PodApiRpc.lowestPrice)
  lowestPrice(@Payload() request: LowestPriceRequest) {
    return lowestPrice(this.catalogue.get(), request);
  }

  @OnRpc(PodApiRpc.dataCenters)
  dataCenters() {
    return dataCenterOffers(this.catalogue.get());
  }
}
