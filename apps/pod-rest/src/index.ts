import type { ServiceDescriptor } from '@runplane/platform';
import { POD_REST_MIGRATIONS, PodRestModule } from './pod-rest.module.js';

export { PodRestModule } from './pod-rest.module.js';

/** pod-rest serves the RunPod REST v1 API: Pods, endpoints and templates. */
export const podRestService: ServiceDescriptor = {
  name: 'pod-rest',
  module: PodRestModule,
  defaultPort: 8084,
  migrationsDir: POD_REST_MIGRATIONS,
};
