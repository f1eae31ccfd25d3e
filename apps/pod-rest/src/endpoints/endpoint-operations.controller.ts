import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '@runplane/auth';
import { EndpointMetricsQuery, type Principal } from '@runplane/contracts';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { EndpointOperationsService } from './endpoint-operations.service.js';

/** Operating an endpoint (docs/operating.md): its workers and its metrics. Another user's endpoint is "not found". */
@ApiTags('Endpoints')
@Controller('v1/endpoints/:endpointId')
export class EndpointOperationsController {
  constructor(private readonly operations: EndpointOperationsService) {}

  @Get('workers')
  @ApiOperation({
    summary: "List an endpoint's workers",
    description:
      'Its workers, newest first: running ones and, for a while (an hour, at most the last 20 per endpoint by default), ended ones with their exit code and reason, so crash loops stay visible. `isStale`: the worker runs an older version than the endpoint (a rolling release in progress).',
  })
  @ApiOkResponse({ description: 'Its workers.', schema: listOf('EndpointWorker') })
  @ApiErrors(404)
  workers(@CurrentPrincipal() principal: Principal, @Param('endpointId') endpointId: string) {
    return this.operations.workers(principal, endpointId);
  }

  @Get('metrics')
  @ApiOperation({
    summary: "An endpoint's job counts and latency percentiles",
    description:
      "Over the last `window` (default 1h; 1m to 24h, such as 15m or 24h): jobs that ended by final state, and p70/p90/p98 in ms of delayTime (queue wait), executionTime and coldStart (a worker's start to its first call-in).",
  })
  @ApiOkResponse({ description: 'The metrics.', schema: schemaRef('EndpointMetrics') })
  @ApiErrors(404)
  metrics(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Query() query: EndpointMetricsQuery,
  ) {
    return this.operations.metrics(principal, endpointId, query.window ?? '1h');
  }
}
