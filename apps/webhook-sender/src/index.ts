import type { ServiceDescriptor } from '@runplane/platform';
import { WEBHOOK_SENDER_MIGRATIONS, WebhookSenderModule } from './webhook-sender.module.js';

export { WebhookSenderModule } from './webhook-sender.module.js';

/** webhook-sender delivers job webhooks durably, with retries and signatures. */
export const webhookSenderService: ServiceDescriptor = {
  name: 'webhook-sender',
  module: WebhookSenderModule,
  defaultPort: 8083,
  migrationsDir: WEBHOOK_SENDER_MIGRATIONS,
};
