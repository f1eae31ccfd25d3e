import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { delivered } from '../http/long-polls.js';
import { queryInt, resolveWorkerCall } from './worker-call.js';
import {
  DoneDocs,
  PingDocs,
  StopDocs,
  StreamDocs,
  TakeBatchDocs,
  TakeDocs,
  WorkerControllerDocs,
} from './worker.docs.js';
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
@WorkerControllerDocs()
@Controller('v2/:endpointId')
@RequireAccess('worker')
export class WorkerController {
  constructor(private readonly workers: WorkerService) {}

  @Get('job-take/:workerId')
  @TakeDocs()
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
  @TakeBatchDocs()
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
  @DoneDocs()
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
  @StreamDocs()
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
  @PingDocs()
  ping(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param() params: WorkerParams,
    @Req() request: FastifyRequest,
  ) {
    return this.workers.ping(principal, endpointId, callOf(request, params, false));
  }

  @Get('job-stop/:workerId')
  @StopDocs()
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
