import { Module } from '@nestjs/common';
import { JobEvents } from '@runplane/contracts';
import { DatabaseModule, outboxRelayProvider } from '@runplane/database';
import { LOGGER } from '@runplane/platform';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from '../generated/prisma/client.js';
import { SchedulerMetrics } from '../metrics/scheduler-metrics.js';
import { SharedModule } from '../shared/shared.module.js';
import { EndpointOperationsRepository } from './endpoint-operations.repository.js';
import { EndpointsRepository } from './endpoints.repository.js';
import { JobControlRepository } from './job-control.repository.js';
import { JobCountsRepository } from './job-counts.repository.js';
import { JobDispatchRepository } from './job-dispatch.repository.js';
import { JobDeletions } from './job-deletions.js';
import { JobEffects } from './job-effects.js';
import { JobIntakeRepository } from './job-intake.repository.js';
import { JobQueriesRepository } from './job-queries.repository.js';
import { JobResultsRepository } from './job-results.repository.js';
import { JobStopsRepository } from './job-stops.repository.js';
import { JobTimersRepository } from './job-timers.repository.js';
import { LeaseRepository } from './lease.repository.js';
import { SchedulerTables } from './scheduler-tables.js';
import { WorkersRepository } from './workers.repository.js';

export const SCHEDULER_MIGRATIONS = fileURLToPath(
  new URL('../../prisma/migrations', import.meta.url),
);

const REPOSITORIES = [
  EndpointsRepository,
  EndpointOperationsRepository,
  JobIntakeRepository,
  JobDispatchRepository,
  JobResultsRepository,
  JobStopsRepository,
  JobControlRepository,
  JobTimersRepository,
  JobQueriesRepository,
  JobCountsRepository,
  WorkersRepository,
  LeaseRepository,
];

/**
 * The scheduler's state and its transitions: the only code that touches its tables. Features
 * (endpoints, jobs, workers, timers, autoscaler) use these repositories and never SQL of their own;
 * the rules of the job state machine live here too (`job-rules.ts`, `worker-rules.ts`).
 */
@Module({
  imports: [
    DatabaseModule.forService({
      service: 'scheduler',
      client: PrismaClient,
      migrationsDir: SCHEDULER_MIGRATIONS,
    }),
    SharedModule,
  ],
  providers: [
    SchedulerTables,
    SchedulerMetrics,
    JobEffects,
    JobDeletions,
    ...REPOSITORIES,
    outboxRelayProvider({
      service: 'scheduler',
      client: PrismaClient,
      events: [JobEvents.finished],
      logger: LOGGER,
    }),
  ],
  exports: REPOSITORIES,
})
export class StoreModule {}
