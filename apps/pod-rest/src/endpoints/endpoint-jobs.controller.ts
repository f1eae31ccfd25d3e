import { Controller, Get, Param } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { EndpointJobsControllerDocs, JobDetailDocs, JobEventsDocs } from './endpoint-jobs.docs.js';
import { EndpointJobsService } from './endpoint-jobs.service.js';

/** A job of an endpoint, for operators. Another user's or an unknown endpoint or job is "not found". */
@EndpointJobsControllerDocs()
@Controller('v1/endpoints/:endpointId/jobs/:jobId')
export class EndpointJobsController {
  constructor(private readonly jobs: EndpointJobsService) {}

  @Get()
  @JobDetailDocs()
  detail(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.jobs.detail(principal, endpointId, jobId);
  }

  @Get('events')
  @JobEventsDocs()
  events(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Param('jobId') jobId: string,
  ) {
    return this.jobs.events(principal, endpointId, jobId);
  }
}
