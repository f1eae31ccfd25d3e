import { Controller, Get, Param, Post, Query, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { ApiError, schemaRef } from '@runplane/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitedOperation, QueueLimitsInterceptor } from '../limits/queue-limits.interceptor.js';
import { StreamWaitQuery } from './queue-query.dto.js';
import { StreamService, wantsEventStream } from './stream.service.js';

/**
 * `GET|POST /v2/{endpointId}/stream/{jobId}?wait=`: `{id, status, stream}` JSON, or server-sent
 * events with `Accept: text/event-stream`. A read whatever the method (the Go SDK POSTs, §3.4).
 */
const WAIT = {
  name: 'wait',
  description: 'How long an empty poll waits for a chunk, in ms (default 10000).',
};
const STREAMED = {
  description:
    'The chunks not returned before (`stream` may be empty once the job is final); with `Accept: text/event-stream`, each chunk as an SSE `data:` line as it arrives, until the job is final.',
  content: {
    'application/json': {
      schema: schemaRef('StreamResponse'),
      example: {
        id: '5f2c6b9e-3d1a-4c8e-9b7f-2a6d4e8c1f03',
        status: 'IN_PROGRESS',
        stream: [{ output: { text: ['Hel'] } }, { output: { text: ['lo'] } }],
      },
    },
    'text/event-stream': { schema: { type: 'string' } },
  },
};

@ApiTags('Queue')
@ApiError(404, "Unknown endpoint or job, another user's, or a job removed when its TTL elapsed.")
@ApiError(429)
@Controller('v2/:endpointId')
@UseInterceptors(QueueLimitsInterceptor)
@LimitedOperation('stream')
@RequireAccess('read')
export class StreamController {
  constructor(private readonly streams: StreamService) {}

  @Get('stream/:jobId')
  @ApiOperation({
    summary: "Read the job's streamed output",
    description:
      'Drains the chunks the worker streamed since the last call; waits up to `wait` ms (default 10000) when there are none and the job is not final.',
  })
  @ApiQuery(WAIT)
  @ApiOkResponse(STREAMED)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: StreamWaitQuery,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.serve(principal, endpointId, jobId, query, request, reply);
  }

  @Post('stream/:jobId')
  @ApiOperation({ summary: "Read the job's streamed output (POST, as RunPod's Go SDK sends it)" })
  @ApiQuery(WAIT)
  @ApiOkResponse(STREAMED)
  post(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: StreamWaitQuery,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.serve(principal, endpointId, jobId, query, request, reply);
  }

  private async serve(
    principal: Principal,
    endpointId: string,
    jobId: string,
    query: StreamWaitQuery,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    if (wantsEventStream(request.headers.accept))
      return this.streams.events(principal, endpointId, jobId, reply, query.wait);
    const body = await this.streams.poll(principal, endpointId, jobId, query.wait);
    reply.status(200).send(body);
  }
}
