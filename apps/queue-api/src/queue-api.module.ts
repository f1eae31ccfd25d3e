import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';
import { QueueController } from './jobs/queue.controller.js';
import { QueueService } from './jobs/queue.service.js';

export const QUEUE_API_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

@Module({
  imports: [DatabaseModule.forService({ service: 'queue-api', client: PrismaClient, migrationsDir: QUEUE_API_MIGRATIONS })],
  controllers: [QueueController],
  providers: [QueueService],
})
export class QueueApiModule {}
