import type { ServiceDescriptor } from '@runplane/platform';
import { SchedulerModule } from './scheduler.module.js';
import { SCHEDULER_MIGRATIONS } from './store/store.module.js';

export { SchedulerModule } from './scheduler.module.js';

/** The scheduler owns jobs and endpoints: lifecycle, timers, dispatch to workers. */
export const schedulerService: ServiceDescriptor = {
  name: 'scheduler',
  module: SchedulerModule,
  defaultPort: 8082,
  migrationsDir: SCHEDULER_MIGRATIONS,
};
