import { Module } from '@nestjs/common';
import { AutoscalerModule } from './autoscaler/autoscaler.module.js';
import { EndpointsModule } from './endpoints/endpoints.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { TimersModule } from './timers/timers.module.js';
import { WorkersModule } from './workers/workers.module.js';

/**
 * The scheduler: endpoints, jobs and workers. `store/` holds its state and every transition of it
 * (the only code that touches its tables); the features on top are modules that export only what
 * others use: `endpoints/` (CRUD, rolling releases, operations), `jobs/` (client operations),
 * `workers/` (the worker protocol and dispatch), `timers/` (durable deadlines, the loops' lease),
 * `autoscaler/` (starting and stopping managed workers).
 */
@Module({
  imports: [EndpointsModule, JobsModule, WorkersModule, TimersModule, AutoscalerModule],
})
export class SchedulerModule {}
