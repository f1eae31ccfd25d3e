import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { ComputeModule } from './compute/compute.module.js';
import { EndpointOperationsController } from './endpoints/endpoint-operations.controller.js';
import { EndpointOperationsService } from './endpoints/endpoint-operations.service.js';
import { EndpointsController } from './endpoints/endpoints.controller.js';
import { EndpointsService } from './endpoints/endpoints.service.js';
import { EndpointJobsController } from './endpoints/endpoint-jobs.controller.js';
import { EndpointJobsService } from './endpoints/endpoint-jobs.service.js';
import { PrismaClient } from './generated/prisma/client.js';
import { PodViews } from './pods/pod-view.js';
import { CatalogueBusController } from './catalogue/catalogue.bus-controller.js';
import { LogCollector } from './logs/log-collector.js';
import { LogLinesRepository } from './logs/log-lines.repository.js';
import { EndpointLogsController, PodLogsController } from './logs/logs.controller.js';
import { LogsService } from './logs/logs.service.js';
import { NetworkVolumesBusController } from './network-volumes/network-volumes.bus-controller.js';
import { NetworkVolumesController } from './network-volumes/network-volumes.controller.js';
import { NetworkVolumesRepository } from './network-volumes/network-volumes.repository.js';
import { NetworkVolumesService } from './network-volumes/network-volumes.service.js';
import { PodsBusController } from './pods/pods.bus-controller.js';
import { PodsController } from './pods/pods.controller.js';
import { PodsRepository } from './pods/pods.repository.js';
import { PodsService } from './pods/pods.service.js';
import { SecretEnv } from './secrets/secret-env.js';
import { TemplateUsageBusController } from './templates/template-usage.bus-controller.js';
import { TemplateUsageService } from './templates/template-usage.service.js';
import { TemplatesController } from './templates/templates.controller.js';
import { TemplatesService } from './templates/templates.service.js';
import { WorkersBusController } from './workers/workers.bus-controller.js';
import { WorkersService } from './workers/workers.service.js';
import { WorkloadLifecycle } from './workloads/workload-lifecycle.js';
import { GpuAllocator } from './gpus/gpu-allocator.js';

export const POD_REST_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** pod-rest serves the RunPod REST v1 API: Pods, network volumes, endpoints and templates; it runs Pods (serverless workers included) on its compute provider. */
@Module({
  imports: [
    DatabaseModule.forService({
      service: 'pod-rest',
      client: PrismaClient,
      migrationsDir: POD_REST_MIGRATIONS,
    }),
    ComputeModule,
  ],
  controllers: [
    WorkersBusController,
    TemplatesController,
    EndpointsController,
    EndpointJobsController,
    EndpointOperationsController,
    TemplateUsageBusController,
    PodsController,
    PodsBusController,
    CatalogueBusController,
    NetworkVolumesController,
    NetworkVolumesBusController,
    PodLogsController,
    EndpointLogsController,
  ],
  providers: [
    WorkloadLifecycle,
    GpuAllocator,
    WorkersService,
    PodsRepository,
    TemplatesService,
    EndpointsService,
    EndpointJobsService,
    EndpointOperationsService,
    SecretEnv,
    TemplateUsageService,
    PodsService,
    PodViews,
    NetworkVolumesService,
    NetworkVolumesRepository,
    LogLinesRepository,
    LogCollector,
    LogsService,
  ],
})
export class PodRestModule {}
