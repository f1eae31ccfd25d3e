import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in endpoint-operations.controller.ts,
// one decorator per route.

export const EndpointOperationsControllerDocs = () => applyDecorators(ApiTags('Endpoints'));

export const EndpointWorkersDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "List an endpoint's workers",
      description:
        'Its workers, newest first: running ones and, for a while (an hour, at most the last 20 per endpoint by default), ended ones with their exit code and reason, so crash loops stay visible. `isStale`: the worker runs an older version than the endpoint (a rolling release in progress).',
    }),
    ApiOkResponse({ description: 'Its workers.', schema: listOf('EndpointWorker') }),
    ApiErrors(404),
  );

export const EndpointMetricsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "An endpoint's job counts and latency percentiles",
      description:
        "Over the last `window` (default 1h; 1m to 24h, such as 15m or 24h): jobs that ended by final state, and p70/p90/p98 in ms of delayTime (queue wait), executionTime and coldStart (a worker's start to its first call-in).",
    }),
    ApiOkResponse({ description: 'The metrics.', schema: schemaRef('EndpointMetrics') }),
    ApiErrors(404),
  );
