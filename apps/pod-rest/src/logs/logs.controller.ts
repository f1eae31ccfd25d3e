import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import type { FastifyReply } from 'fastify';
import {
  EndpointLogsControllerDocs,
  JobLogsDocs,
  PodLogsControllerDocs,
  PodLogsDocs,
  WorkerLogsDocs,
} from './logs.docs.js';
import { JobLogQuery, LogQuery } from './log-query.dto.js';
import { LogsService } from './logs.service.js';
import type { PodRow } from '../pods/pods.repository.js';

/** Serves the lines of a Pod or worker, as JSON or as server-sent events (`follow=true`). */
async function answer(
  logs: LogsService,
  pod: PodRow,
  q: LogQuery,
  reply: FastifyReply,
): Promise<void> {
  if (q.follow) return logs.follow(pod, q, reply);
  reply.status(200).send(await logs.read(pod, q));
}

@PodLogsControllerDocs()
@Controller('v1/pods')
export class PodLogsController {
  constructor(private readonly logs: LogsService) {}

  @Get(':podId/logs')
  @PodLogsDocs()
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Query() q: LogQuery,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await answer(this.logs, await this.logs.pod(principal, podId), q, reply);
  }
}

@EndpointLogsControllerDocs()
@Controller('v1/endpoints')
export class EndpointLogsController {
  constructor(private readonly logs: LogsService) {}

  @Get(':endpointId/workers/:workerId/logs')
  @WorkerLogsDocs()
  async worker(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('workerId') workerId: string,
    @Query() q: LogQuery,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await answer(this.logs, await this.logs.worker(principal, endpointId, workerId), q, reply);
  }

  @Get(':endpointId/logs')
  @JobLogsDocs()
  job(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() q: JobLogQuery,
  ) {
    return this.logs.forJob(principal, endpointId, q.jobId);
  }
}
