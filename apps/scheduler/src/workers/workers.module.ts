import { Module } from '@nestjs/common';
import { EndpointsModule } from '../endpoints/endpoints.module.js';
import { SharedModule } from '../shared/shared.module.js';
import { StoreModule } from '../store/store.module.js';
import { WorkerKeys } from './worker-keys.js';
import { WorkerLiveness } from './worker-liveness.service.js';
import { WorkerProtocolService } from './worker-protocol.service.js';
import { WorkerRelay } from './worker-relay.js';
import { WorkersBusController } from './workers.bus-controller.js';

/** The worker protocol (dispatch happens here), workers' liveness and their keys. */
@Module({
  imports: [SharedModule, StoreModule, EndpointsModule],
  controllers: [WorkersBusController],
  providers: [WorkerProtocolService, WorkerLiveness, WorkerKeys, WorkerRelay],
  exports: [WorkerLiveness, WorkerKeys, WorkerRelay],
})
export class WorkersModule {}
