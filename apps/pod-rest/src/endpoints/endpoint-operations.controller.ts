import { Controller, Get, Param, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@runplane/auth';
import { EndpointMetricsQuery, type Principal } from '@runplane/contracts';
import {
  EndpointMetricsDocs,
  EndpointOperationsControllerDocs,
  EndpointWorkersDocs,
} from './endpoint-operations.docs.js';
import { EndpointOperationsService } from './endpoint-operations.service.js';

/** Operating an endpoint (docs/operating.md): its workers and its metrics. Another user's endpoint is "not found". */
@EndpointOperationsControllerDocs()
@Controller('v1/endpoints/:endpointId')
export class EndpointOperationsController {
  constructor(private readonly operations: EndpointOperationsService) {}

  @Get('workers')
  @EndpointWorkersDocs()
  workers(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string) {
    return this.operations.workers(principal, endpointId);
  }

  @Get('metrics')
  @EndpointMetricsDocs()
  metrics(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() query: EndpointMetricsQuery,
  ) {
    return this.operations.metrics(principal, endpointId, query.window ?? '1h');
  }
}
