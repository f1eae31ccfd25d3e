import { Module } from '@nestjs/common';
import { JobEvents } from '@runplane/contracts';
import { DatabaseModule, outboxRelayProvider } from '@runplane/database';
import { LOGGER } from '@runplane/platform';
import { fileURLToPath } from 'node:url';
import { Autoscaler } from './autoscaler/autoscaler.service.js';
import { PublicUrl } from './autoscaler/public-url.js';
import { EndpointOperationsBusController } from './endpoints/endpoint-operations.bus-controller.js';
import { EndpointOperationsRepository } from './endpoints/endpoint-operations.repository.js';
import { EndpointOperationsService } from './endpoints/endpoint-operations.service.js';
import { WaitingReasons } from './endpoints/waiting-reasons.js';
import { EndpointsBusController } from './endpoints/endpoints.bus-controller.js';
import { EndpointsRepository } from './endpoints/endpoints.repository.js';
import { EndpointCache } from './endpoints/endpoint-cache.js';
import { EndpointsService } from './endpoints/endpoints.service.js';
import { PrismaClient } from './generated/prisma/client.js';
import { JobsBusController } from './jobs/jobs.bus-controller.js';
import { JobControlRepository } from './jobs/job-control.repository.js';
import { JobDispatchRepository } from './jobs/job-dispatch.repository.js';
import { JobFinalization } from './jobs/job-finalization.js';
import { JobIntakeRepository } from './jobs/job-intake.repository.js';
import { JobQueriesRepository } from './jobs/job-queries.repository.js';
import { JobResultsRepository } from './jobs/job-results.repository.js';
import { JobStopsRepository } from './jobs/job-stops.repository.js';
import { JobTimersRepository } from './jobs/job-timers.repository.js';
import { JobsService } from './jobs/jobs.service.js';
import { SchedulerSettings } from './settings.js';
import { SchedulerMetrics } from './metrics/scheduler-metrics.js';
import { JobChanges } from './shared/job-changes.js';
import { SchedulerTables } from './shared/sql.js';
import { LeaseRepository } from './timers/lease.repository.js';
import { Leadership } from './timers/leadership.js';
import { Sweeper } from './timers/sweeper.service.js';
import { WorkerLiveness } from './workers/worker-liveness.service.js';
import { WorkerKeys } from './workers/worker-keys.js';
import { WorkerProtocolService } from './workers/worker-protocol.service.js';
import { WorkersBusController } from './workers/workers.bus-controller.js';
import { WorkersRepository } from './workers/workers.repository.js';

export const SCHEDULER_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/**
 * The scheduler: endpoints, jobs and workers. Feature folders: `endpoints/` (CRUD, rolling
 * releases), `jobs/` (client operations), `workers/` (the worker protocol and dispatch),
 * `timers/` (durable deadlines), `autoscaler/` (starting and stopping managed workers).
 */
@Module({
  imports: [
    DatabaseModule.forService({
      service: 'scheduler',
      client: PrismaClient,
      migrationsDir: SCHEDULER_MIGRATIONS,
    }),
  ],
  controllers: [
    JobsBusController,
    WorkersBusController,
    EndpointsBusController,
    EndpointOperationsBusController,
  ],
  providers: [
    SchedulerSettings,
    SchedulerTables,
    JobChanges,
    SchedulerMetrics,
    EndpointsRepository,
    EndpointCache,
    JobFinalization,
    JobIntakeRepository,
    JobDispatchRepository,
    JobResultsRepository,
    JobStopsRepository,
    JobControlRepository,
    JobTimersRepository,
    JobQueriesRepository,
    WorkersRepository,
    LeaseRepository,
    EndpointsService,
    EndpointOperationsRepository,
    EndpointOperationsService,
    WaitingReasons,
    JobsService,
    WorkerProtocolService,
    WorkerLiveness,
    WorkerKeys,
    Leadership,
    Sweeper,
    PublicUrl,
    Autoscaler,
    outboxRelayProvider({
      service: 'scheduler',
      client: PrismaClient,
      events: [JobEvents.finished],
      logger: LOGGER,
    }),
  ],
})
export class SchedulerModule {}
