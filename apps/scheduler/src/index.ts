import type { ServiceDescriptor } from '@runplane/platform';
import { SCHEDULER_MIGRATIONS, SchedulerModule } from './scheduler.module.js';

export { SchedulerModule } from './scheduler.module.js';

/** The scheduler owns jobs and endpoints: lifecycle, timers, dispatch to workers. */
export const schedulerService: ServiceDescriptor = {
  name: 'scheduler',
  module: SchedulerModule,
  defaultPort: 8082,
  migrationsDir: SCHEDULER_MIGRATIONS,
};
