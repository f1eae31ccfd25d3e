import { Module } from '@nestjs/common';
import { EndpointsModule } from '../endpoints/endpoints.module.js';
import { SharedModule } from '../shared/shared.module.js';
import { StoreModule } from '../store/store.module.js';
import { JobsBusController } from './jobs.bus-controller.js';
import { JobsService } from './jobs.service.js';

/** Jobs as clients drive them (through queue-api): submit, status, await, stream, cancel, retry. */
@Module({
  imports: [SharedModule, StoreModule, EndpointsModule],
  controllers: [JobsBusController],
  providers: [JobsService],
})
export class JobsModule {}
