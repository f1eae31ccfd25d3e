import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';

export const WEBHOOK_SENDER_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** webhook-sender delivers job webhooks durably, with retries and signatures. Its behaviour arrives with its issue; for now it owns and migrates its database. */
@Module({
  imports: [DatabaseModule.forService({ service: 'webhook-sender', client: PrismaClient, migrationsDir: WEBHOOK_SENDER_MIGRATIONS })],
})
export class WebhookSenderModule {}
