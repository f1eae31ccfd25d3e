import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { JobRequestDto, type Principal } from '@runplane/contracts';
import { QueueService } from './queue.service.js';

/** RunPod's queue API: `/v2/{endpointId}/...` (spec "Queue operations"). All successes are 200. */
@Controller('v2/:endpointId')
export class QueueController {
  constructor(private readonly queue: QueueService) {}

  @Post('run')
  @HttpCode(200)
  run(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Body() body: JobRequestDto) {
    return this.queue.submit(principal, endpointId, body);
  }

  @Get('status/:jobId')
  status(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Param('jobId') jobId: string) {
    return this.queue.status(principal, endpointId, jobId);
  }

  /** The Go SDK reads status with POST (runpod-compat §3.4). */
  @Post('status/:jobId')
  @HttpCode(200)
  statusByPost(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string, @Param('jobId') jobId: string) {
    return this.queue.status(principal, endpointId, jobId);
  }
}
