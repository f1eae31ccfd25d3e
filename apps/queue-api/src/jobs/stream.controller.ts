import { Controller, Get, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitedOperation, QueueLimitsGuard } from '../limits/queue-limits.guard.js';
import { StreamWaitQuery } from './queue-query.dto.js';
import { StreamControllerDocs, StreamGetDocs, StreamPostDocs } from './stream.docs.js';
import { StreamService, wantsEventStream } from './stream.service.js';

/**
 * `GET|POST /v2/{endpointId}/stream/{jobId}?wait=`: `{id, status, stream}` JSON, or server-sent
 * events with `Accept: text/event-stream`. A read whatever the method (the Go SDK POSTs, §3.4).
 */
@StreamControllerDocs()
@Controller('v2/:endpointId')
@UseGuards(QueueLimitsGuard)
@LimitedOperation('stream')
@RequireAccess('read')
export class StreamController {
  constructor(private readonly streams: StreamService) {}

  @Get('stream/:jobId')
  @StreamGetDocs()
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
  @StreamPostDocs()
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
