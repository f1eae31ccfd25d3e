import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';
import { LongPolls } from './http/long-polls.js';
import { PayloadLimits } from './http/payload-limits.js';
import { IdempotencyRepository } from './jobs/idempotency.repository.js';
import { IdempotencyService } from './jobs/idempotency.service.js';
import { QueueController } from './jobs/queue.controller.js';
import { QueueService } from './jobs/queue.service.js';
import { StreamController } from './jobs/stream.controller.js';
import { StreamService } from './jobs/stream.service.js';
import { LimitSettings } from './limits/limit-settings.js';
import { QueueLimitsGuard } from './limits/queue-limits.guard.js';
import { QueueLimits } from './limits/queue-limits.service.js';
import { ReplicaRegistry } from './limits/replica-registry.js';
import { WorkerCounts } from './limits/worker-counts.js';
import { OpenAiController } from './openai/openai.controller.js';
import { OpenAiService } from './openai/openai.service.js';
import { WorkerController } from './workers/worker.controller.js';
import { WorkerPolls } from './workers/worker-polls.js';
import { WorkerRelayHeartbeat } from './workers/worker-relay-heartbeat.js';
import { WorkerService } from './workers/worker.service.js';

export const QUEUE_API_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

@Module({
  imports: [
    DatabaseModule.forService({
      service: 'queue-api',
      client: PrismaClient,
      migrationsDir: QUEUE_API_MIGRATIONS,
    }),
  ],
  controllers: [QueueController, StreamController, WorkerController, OpenAiController],
  providers: [
    QueueService,
    StreamService,
    WorkerService,
    OpenAiService,
    IdempotencyService,
    IdempotencyRepository,
    LongPolls,
    PayloadLimits,
    LimitSettings,
    QueueLimits,
    QueueLimitsGuard,
    ReplicaRegistry,
    WorkerCounts,
    WorkerRelayHeartbeat,
    WorkerPolls,
  ],
})
export class QueueApiModule {}
