import { Controller, Get, Param } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { JobEventsControllerDocs, JobEventsDocs } from './job-events.docs.js';
import { JobEventsService } from './job-events.service.js';

/** A job's history, for operators. Another user's or an unknown endpoint or job is "not found". */
@JobEventsControllerDocs()
@Controller('v1/endpoints/:endpointId/jobs/:jobId')
export class JobEventsController {
  constructor(private readonly events: JobEventsService) {}

  @Get('events')
  @JobEventsDocs()
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.events.list(principal, endpointId, jobId);
  }
}
