import type { ServiceDescriptor } from '@runplane/platform';
import { POD_REST_MIGRATIONS, PodRestModule } from './pod-rest.module.js';

export { PodRestModule } from './pod-rest.module.js';

/** pod-rest serves the RunPod REST v1 API: Pods, network volumes, endpoints and templates. */
export const podRestService: ServiceDescriptor = {
  name: 'pod-rest',
  module: PodRestModule,
  defaultPort: 8084,
  migrationsDir: POD_REST_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'Endpoints',
        description:
          'Serverless endpoints (RunPod REST v1): a template, hardware and scaling settings.',
      },
      {
        name: 'Templates',
        description:
          'What a Pod or a serverless worker runs (RunPod REST v1; the same templates as GraphQL).',
      },
      {
        name: 'Pods',
        description: 'Rented compute instances (RunPod REST v1); serverless workers are Pods too.',
      },
      {
        name: 'Network volumes',
        description:
          "A user's storage in one data center (RunPod REST v1), mounted by the Pods that name it.",
      },
    ],
  },
};
