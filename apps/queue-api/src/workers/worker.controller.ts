import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { delivered } from '../http/long-polls.js';
import { queryInt, resolveWorkerCall } from './worker-call.js';
import { WorkerService } from './worker.service.js';

type WorkerParams = { workerId: string; jobId?: string };

function callOf(request: FastifyRequest, params: WorkerParams, needsJob: boolean) {
  return resolveWorkerCall(
    {
      url: request.url,
      params,
      query: request.query as Record<string, unknown> | undefined,
      requestId: request.headers['x-request-id'],
    },
    needsJob,
  );
}

/**
 * The worker protocol of RunPod's serverless worker SDK: the
 * endpoint's worker key (raw or Bearer) or an admin/readwrite key. Long polls answer 204 with an
 * empty body when there is nothing; jobs are JSON (runpod-python drops a job without that type).
 */
const JOB_ID_IN_URL =
  'The job id is the last path segment, or (without it, or as a literal `$ID`) the `X-Request-ID` header.';
const NOTHING = 'Nothing within the long poll (up to 30 s); empty body.';

@ApiTags('Worker protocol')
@ApiErrors(404)
@Controller('v2/:endpointId')
@RequireAccess('worker')
export class WorkerController {
  constructor(private readonly workers: WorkerService) {}

  @Get('job-take/:workerId')
  @ApiOperation({
    summary: 'Take the next job (long poll)',
    description:
      'Claims the oldest queued job for this worker. A job not delivered (connection gone) goes back to the queue.',
  })
  @ApiOkResponse({ description: 'One job.', schema: schemaRef('WorkerJob') })
  @ApiNoContentResponse({ description: NOTHING })
  take(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.handOut(principal, endpointId, params, request, reply, false);
  }

  @Get('job-take-batch/:workerId')
  @ApiOperation({ summary: 'Take up to `batch_size` jobs (long poll)' })
  @ApiQuery({
    name: 'batch_size',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 1 },
  })
  @ApiOkResponse({ description: 'The jobs.', schema: listOf('WorkerJob') })
  @ApiNoContentResponse({ description: NOTHING })
  takeBatch(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.handOut(principal, endpointId, params, request, reply, true);
  }

  @Post(['job-done/:workerId/:jobId', 'job-done/:workerId'])
  @ApiOperation({
    summary: "Post a job's result, error or progress",
    description: `${JOB_ID_IN_URL} The body is JSON whatever its content type; a repeated final post changes nothing.`,
  })
  @ApiQuery({
    name: 'isStream',
    required: false,
    description:
      '`true` when the handler streamed its output: the result is then the streamed chunks.',
    schema: { type: 'boolean' },
  })
  @ApiBody({ schema: schemaRef('JobDoneBody') })
  @ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') })
  @ApiErrors(400)
  @HttpCode(200)
  done(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
    @Body() body: unknown,
  ) {
    return this.workers.done(principal, endpointId, callOf(request, params, true), body);
  }

  @Post(['job-stream/:workerId/:jobId', 'job-stream/:workerId'])
  @ApiOperation({ summary: 'Post one chunk of streamed output', description: JOB_ID_IN_URL })
  @ApiBody({
    schema: {
      type: 'object',
      properties: { output: {} },
      description: 'Normally `{output}`; kept as sent.',
    },
  })
  @ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') })
  @ApiErrors(400)
  @HttpCode(200)
  stream(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
    @Body() body: unknown,
  ) {
    return this.workers.stream(principal, endpointId, callOf(request, params, true), body);
  }

  @Get('ping/:workerId')
  @ApiOperation({
    summary: 'Heartbeat',
    description:
      'A worker silent for 3 ping intervals is unhealthy and its running jobs go back to the queue.',
  })
  @ApiQuery({
    name: 'job_id',
    required: false,
    description: 'The jobs in progress, comma-separated.',
    schema: { type: 'string' },
  })
  @ApiQuery({
    name: 'status',
    required: false,
    description:
      '`unhealthy`: the worker failed its fitness checks and is about to exit (`check`, `reason` say why).',
    schema: { type: 'string', enum: ['unhealthy'] },
  })
  @ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') })
  ping(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
  ) {
    return this.workers.ping(principal, endpointId, callOf(request, params, false));
  }

  @Get('job-stop/:workerId')
  @ApiOperation({
    summary: 'Jobs to abandon (long poll)',
    description: 'Jobs of this worker that were cancelled, timed out or expired meanwhile.',
  })
  @ApiOkResponse({ description: 'The jobs to stop.', schema: schemaRef('StopJobsResponse') })
  @ApiNoContentResponse({ description: NOTHING })
  async stop(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const jobsToStop = await this.workers.stop(
      principal,
      endpointId,
      callOf(request, params, false),
      reply.raw,
    );
    if (!jobsToStop.length) reply.status(204).send();
    else reply.status(200).send({ jobsToStop });
  }

  /** job-take answers one job object, job-take-batch an array; undelivered jobs go back to the queue. */
  private async handOut(
    principal: Principal,
    endpointId: string,
    params: WorkerParams,
    request: FastifyRequest,
    reply: FastifyReply,
    batch: boolean,
  ) {
    const call = callOf(request, params, false);
    const size = batch ? queryInt(call.query.batch_size, 1, 1, 100) : 1;
    const { jobs, giveBack } = await this.workers.take(
      principal,
      endpointId,
      call,
      size,
      reply.raw,
    );
    if (!jobs.length) {
      reply.status(204).send();
      return;
    }
    reply.status(200).send(batch ? jobs : jobs[0]);
    if (!(await delivered(reply.raw))) await giveBack();
  }
}
