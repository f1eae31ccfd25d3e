import type { ServiceDescriptor } from '@runplane/platform';
import { JOB_WEBHOOK_OPENAPI } from './deliveries/webhook-docs.js';
import { WEBHOOK_SENDER_MIGRATIONS, WebhookSenderModule } from './webhook-sender.module.js';

export { WebhookSenderModule } from './webhook-sender.module.js';

/** webhook-sender delivers job webhooks durably, with retries and signatures. */
export const webhookSenderService: ServiceDescriptor = {
  name: 'webhook-sender',
  module: WebhookSenderModule,
  defaultPort: 8083,
  migrationsDir: WEBHOOK_SENDER_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'Webhooks',
        description:
          'The job webhooks Runplane sent for the caller, every attempt, redelivery and the signing secret.',
      },
    ],
    webhooks: { jobFinished: JOB_WEBHOOK_OPENAPI },
  },
};
