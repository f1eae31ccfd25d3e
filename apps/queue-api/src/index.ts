import type { ServiceDescriptor } from '@runplane/platform';
import { QUEUE_API_MIGRATIONS, QueueApiModule } from './queue-api.module.js';

export { QueueApiModule } from './queue-api.module.js';

/** queue-api: the RunPod-compatible `/v2` HTTP API for clients and workers. */
export const queueApiService: ServiceDescriptor = {
  name: 'queue-api',
  module: QueueApiModule,
  defaultPort: 8081,
  migrationsDir: QUEUE_API_MIGRATIONS,
};
