import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';
import { JobsBusController } from './jobs/jobs.bus-controller.js';
import { JobsRepository } from './jobs/jobs.repository.js';
import { JobsService } from './jobs/jobs.service.js';

export const SCHEDULER_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

@Module({
  imports: [DatabaseModule.forService({ service: 'scheduler', client: PrismaClient, migrationsDir: SCHEDULER_MIGRATIONS })],
  controllers: [JobsBusController],
  providers: [JobsService, JobsRepository],
})
export class SchedulerModule {}
