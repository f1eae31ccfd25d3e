import { Module } from '@nestjs/common';
import { SharedModule } from '../shared/shared.module.js';
import { StoreModule } from '../store/store.module.js';
import { EndpointCache } from './endpoint-cache.js';
import { EndpointOperationsBusController } from './endpoint-operations.bus-controller.js';
import { EndpointOperationsService } from './endpoint-operations.service.js';
import { EndpointsBusController } from './endpoints.bus-controller.js';
import { EndpointsService } from './endpoints.service.js';
import { WaitingReasons } from './waiting-reasons.js';

/** Endpoints: create, update (rolling releases), delete; health, workers, metrics, waiting reasons. */
@Module({
  imports: [SharedModule, StoreModule],
  controllers: [EndpointsBusController, EndpointOperationsBusController],
  providers: [EndpointsService, EndpointCache, WaitingReasons, EndpointOperationsService],
  exports: [EndpointsService],
})
export class EndpointsModule {}
