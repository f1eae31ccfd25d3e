import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, listOf } from '@runplane/platform';

// The OpenAPI documentation of the routes in logs.controller.ts, one decorator per route.

const LINES = {
  description:
    'The lines, oldest first (at most 10000: the newest). With `follow=true`: `text/event-stream`, one `data:` line per log line (the same JSON object), until the workload has ended and every line was sent.',
  content: {
    'application/json': { schema: listOf('WorkloadLogLine') },
    'text/event-stream': { schema: { type: 'string' } },
  },
};
const DESCRIPTION =
  'Its stdout and stderr lines, kept across restarts of the server within a bound per Pod (the oldest go first); resolved secrets read `[secret]`.';

export const PodLogsControllerDocs = () => applyDecorators(ApiTags('Pods'));

export const EndpointLogsControllerDocs = () => applyDecorators(ApiTags('Endpoints'));

export const PodLogsDocs = () =>
  applyDecorators(
    ApiOperation({ summary: "A Pod's logs", description: DESCRIPTION }),
    ApiOkResponse(LINES),
    ApiErrors(404),
  );

export const WorkerLogsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "A serverless worker's logs",
      description: `${DESCRIPTION} A worker's Pod id is its worker id.`,
    }),
    ApiOkResponse(LINES),
    ApiErrors(404),
  );

export const JobLogsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "A job's logs",
      description:
        "The lines the endpoint's workers wrote while they held the job `jobId`: from each time a worker took it to its requeue or its end (still held: until now), oldest first.",
    }),
    ApiOkResponse({ description: 'The lines, oldest first.', schema: listOf('WorkloadLogLine') }),
    ApiErrors(404),
  );
