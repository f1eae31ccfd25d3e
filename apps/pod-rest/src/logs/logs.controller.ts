import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { ApiErrors, listOf } from '@runplane/platform';
import type { FastifyReply } from 'fastify';
import { JobLogQuery, LogQuery } from './log-query.dto.js';
import { LogsService } from './logs.service.js';
import type { PodRow } from '../pods/pods.repository.js';

const LINES = {
  description:
    'The lines, oldest first (at most 10000: the newest). With `follow=true`: `text/event-stream`, one `data:` line per log line (the same JSON object), until the workload has ended and every line was sent.',
  content: {
    'application/json': { schema: listOf('WorkloadLogLine') },
    'text/event-stream': { schema: { type: 'string' } },
  },
};
const DESCRIPTION =
  'Its stdout and stderr lines, kept across restarts of the server within a bound per Pod (the oldest go first); resolved secrets read `[secret]`.';

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

@ApiTags('Pods')
@Controller('v1/pods')
export class PodLogsController {
  constructor(private readonly logs: LogsService) {}

  @Get(':podId/logs')
  @ApiOperation({ summary: "A Pod's logs", description: DESCRIPTION })
  @ApiOkResponse(LINES)
  @ApiErrors(404)
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('podId') podId: string,
    @Query() q: LogQuery,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await answer(this.logs, await this.logs.pod(principal, podId), q, reply);
  }
}

@ApiTags('Endpoints')
@Controller('v1/endpoints')
export class EndpointLogsController {
  constructor(private readonly logs: LogsService) {}

  @Get(':endpointId/workers/:workerId/logs')
  @ApiOperation({
    summary: "A serverless worker's logs",
    description: `${DESCRIPTION} A worker's Pod id is its worker id.`,
  })
  @ApiOkResponse(LINES)
  @ApiErrors(404)
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
  @ApiOperation({
    summary: "A job's logs",
    description:
      "The lines the endpoint's workers wrote while they held the job `jobId`: from each time a worker took it to its requeue or its end (still held: until now), oldest first.",
  })
  @ApiOkResponse({ description: 'The lines, oldest first.', schema: listOf('WorkloadLogLine') })
  @ApiErrors(404)
  job(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() q: JobLogQuery,
  ) {
    return this.logs.forJob(principal, endpointId, q.jobId);
  }
}
