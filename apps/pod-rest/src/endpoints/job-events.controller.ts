import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { ApiErrors, listOf } from '@runplane/platform';
import { JobEventsService } from './job-events.service.js';

/** A job's history, for operators. Another user's or an unknown endpoint or job is "not found". */
@ApiTags('Endpoints')
@Controller('v1/endpoints/:endpointId/jobs/:jobId')
export class JobEventsController {
  constructor(private readonly events: JobEventsService) {}

  @Get('events')
  @ApiOperation({
    summary: "A job's history",
    description:
      "Every transition of the job, oldest first: SUBMITTED, TAKEN (by `workerId`), PROGRESS (at most one every few seconds), REQUEUED (`detail`: why: worker lost, unhealthy, exited, stopped, job-take answer given back), RETRIED, STOP_SENT (a job-stop for its worker: cancelled, timed-out, ttl elapsed), then COMPLETED, FAILED, CANCELLED, TIMED_OUT or EXPIRED. Never the job's input or output. Kept as long as the job.",
  })
  @ApiOkResponse({ description: 'Its events, oldest first.', schema: listOf('JobEvent') })
  @ApiErrors(404)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.events.list(principal, endpointId, jobId);
  }
}
