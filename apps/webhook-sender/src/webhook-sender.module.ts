import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { DeliveriesBusController } from './deliveries/deliveries.bus-controller.js';
import { DeliveriesController } from './deliveries/deliveries.controller.js';
import { DeliveriesRepository } from './deliveries/deliveries.repository.js';
import { DeliveriesService } from './deliveries/deliveries.service.js';
import { Dispatcher } from './deliveries/dispatcher.service.js';
import { WebhookHttpClient } from './delivery-http/webhook-http-client.js';
import { PrismaClient } from './generated/prisma/client.js';
import { WebhookSettings } from './settings.js';
import { SigningSecrets } from './signing/signing-secrets.js';

export const WEBHOOK_SENDER_MIGRATIONS = fileURLToPath(
  new URL('../prisma/migrations', import.meta.url),
);

/**
 * webhook-sender: consumes `job.finished.v1` durably, POSTs signed job webhooks with durable
 * retries (`deliveries/`), safely (`delivery-http/`), signed with the account's secret from the
 * vault (`signing/`); `/v1/webhooks` lists deliveries and their attempts.
 */
@Module({
  imports: [
    DatabaseModule.forService({
      service: 'webhook-sender',
      client: PrismaClient,
      migrationsDir: WEBHOOK_SENDER_MIGRATIONS,
    }),
  ],
  controllers: [DeliveriesBusController, DeliveriesController],
  providers: [
    WebhookSettings,
    WebhookHttpClient,
    SigningSecrets,
    DeliveriesRepository,
    DeliveriesService,
    Dispatcher,
  ],
})
export class WebhookSenderModule {}
