import type { ServiceDescriptor } from '@runplane/platform';
import { QUEUE_API_MIGRATIONS, QueueApiModule } from './queue-api.module.js';

export { QueueApiModule } from './queue-api.module.js';

/** queue-api: the RunPod-compatible `/v2` HTTP API for clients and workers. */
export const queueApiService: ServiceDescriptor = {
  name: 'queue-api',
  module: QueueApiModule,
  defaultPort: 8081,
  migrationsDir: QUEUE_API_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'Queue',
        description:
          'Jobs of a serverless endpoint (RunPod queue API): submit, wait, status, stream, cancel, retry, purge, health.',
      },
      {
        name: 'Worker protocol',
        description:
          "What RunPod's worker SDK calls: take jobs, post results and stream chunks, ping, job-stop.",
      },
      {
        name: 'OpenAI-compatible',
        description:
          'OpenAI API requests run as jobs: `base_url = <server>/v2/{endpointId}/openai/v1`.',
      },
    ],
  },
};
