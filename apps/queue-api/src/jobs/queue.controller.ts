import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { JobRequestDto, type Principal } from '@runplane/contracts';
import { LimitedOperation, QueueLimitsGuard } from '../limits/queue-limits.guard.js';
import { parseIdempotencyKey } from './idempotency.service.js';
import { ListRequestsQuery, StatusQuery, SyncWaitQuery } from './queue-query.dto.js';
import {
  CancelDocs,
  HealthDocs,
  PurgeDocs,
  QueueControllerDocs,
  RequestsDocs,
  RetryDocs,
  RunDocs,
  RunsyncDocs,
  StatusByPostDocs,
  StatusDocs,
  StatusSyncByPostDocs,
  StatusSyncDocs,
} from './queue.docs.js';
import { QueueService } from './queue.service.js';

/**
 * RunPod's queue API: `/v2/{endpointId}/...`. Every success
 * is HTTP 200 (RunPod's JS and Go clients reject anything else). Body limits of /run and /runsync
 * are enforced before the body is read (PayloadLimits); rate and concurrency limits per operation by
 * QueueLimitsGuard (/retry and /health have none in RunPod's table).
 */
@QueueControllerDocs()
@Controller('v2/:endpointId')
@UseGuards(QueueLimitsGuard)
export class QueueController {
  constructor(private readonly queue: QueueService) {}

  @Post('run')
  @RunDocs()
  @LimitedOperation('run')
  @HttpCode(200)
  run(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: JobRequestDto,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    return this.queue.run(principal, endpointId, body, parseIdempotencyKey(idempotencyKey));
  }

  @Post('runsync')
  @RunsyncDocs()
  @LimitedOperation('runsync')
  @HttpCode(200)
  runsync(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: JobRequestDto,
    @Query() query: SyncWaitQuery,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    return this.queue.runsync(
      principal,
      endpointId,
      body,
      query.wait,
      parseIdempotencyKey(idempotencyKey),
    );
  }

  // /status, /status-sync and /stream are reads whatever the method: the Go SDK uses POST.
  @Get('status/:jobId')
  @StatusDocs()
  @LimitedOperation('status')
  @RequireAccess('read')
  status(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: StatusQuery,
  ) {
    return this.queue.status(principal, endpointId, jobId, query.ttl);
  }

  @Post('status/:jobId')
  @StatusByPostDocs()
  @LimitedOperation('status')
  @HttpCode(200)
  @RequireAccess('read')
  statusByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: StatusQuery,
  ) {
    return this.queue.status(principal, endpointId, jobId, query.ttl);
  }

  @Get('status-sync/:jobId')
  @StatusSyncDocs()
  @LimitedOperation('status')
  @RequireAccess('read')
  statusSync(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: SyncWaitQuery,
  ) {
    return this.queue.statusSync(principal, endpointId, jobId, query.wait);
  }

  @Post('status-sync/:jobId')
  @StatusSyncByPostDocs()
  @LimitedOperation('status')
  @HttpCode(200)
  @RequireAccess('read')
  statusSyncByPost(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
    @Query() query: SyncWaitQuery,
  ) {
    return this.queue.statusSync(principal, endpointId, jobId, query.wait);
  }

  @Post('cancel/:jobId')
  @CancelDocs()
  @LimitedOperation('cancel')
  @HttpCode(200)
  cancel(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.queue.cancel(principal, endpointId, jobId);
  }

  @Post('retry/:jobId')
  @RetryDocs()
  @HttpCode(200)
  retry(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.queue.retry(principal, endpointId, jobId);
  }

  @Post('purge-queue')
  @PurgeDocs()
  @LimitedOperation('purge-queue')
  @HttpCode(200)
  purge(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string) {
    return this.queue.purge(principal, endpointId);
  }

  @Get('health')
  @HealthDocs()
  health(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string) {
    return this.queue.health(principal, endpointId);
  }

  @Get('requests')
  @RequestsDocs()
  @LimitedOperation('requests')
  requests(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() query: ListRequestsQuery,
  ) {
    return this.queue.list(principal, endpointId, query);
  }
}
