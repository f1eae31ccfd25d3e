import { Module } from '@nestjs/common';
import { SharedModule } from '../shared/shared.module.js';
import { StoreModule } from '../store/store.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { Leadership } from './leadership.js';
import { Sweeper } from './sweeper.service.js';

/** The durable timers (the sweeper) and the lease that lets one replica run the background loops. */
@Module({
  imports: [SharedModule, StoreModule, WorkersModule],
  providers: [Leadership, Sweeper],
  exports: [Leadership],
})
export class TimersModule {}
