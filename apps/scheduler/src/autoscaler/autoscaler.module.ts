import { Module } from '@nestjs/common';
import { SharedModule } from '../shared/shared.module.js';
import { StoreModule } from '../store/store.module.js';
import { TimersModule } from '../timers/timers.module.js';
import { WorkersModule } from '../workers/workers.module.js';
import { Autoscaler } from './autoscaler.service.js';
import { GpuWaits } from './gpu-waits.js';
import { PublicUrl } from './public-url.js';

/** Starts and stops managed workers through pod-rest (scaling policy, crash back-off, rollouts). */
@Module({
  imports: [SharedModule, StoreModule, WorkersModule, TimersModule],
  providers: [Autoscaler, GpuWaits, PublicUrl],
})
export class AutoscalerModule {}
