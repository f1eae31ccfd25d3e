import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, schemaRef } from '@runplane/platform';
import { JOB_ID_EXAMPLE, JOB_NOT_FOUND } from './queue.docs.js';

// The OpenAPI documentation of the routes in stream.controller.ts, one decorator per route.

const WAIT = {
  name: 'wait',
  description: 'How long an empty poll waits for a chunk, in ms (default 10000).',
};
const STREAMED = {
  description:
    'The chunks not returned before (`stream` may be empty once the job is final); with `Accept: text/event-stream`, each chunk as an SSE `data:` line as it arrives, until the job is final.',
  content: {
    'application/json': {
      schema: schemaRef('StreamResponse'),
      example: {
        id: JOB_ID_EXAMPLE,
        status: 'IN_PROGRESS',
        stream: [{ output: { text: ['Hel'] } }, { output: { text: ['lo'] } }],
      },
    },
    'text/event-stream': { schema: { type: 'string' } },
  },
};

export const StreamControllerDocs = () =>
  applyDecorators(ApiTags('Queue'), ApiError(404, JOB_NOT_FOUND), ApiError(429));

export const StreamGetDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "Read the job's streamed output",
      description:
        'Drains the chunks the worker streamed since the last call; waits up to `wait` ms (default 10000) when there are none and the job is not final.',
    }),
    ApiQuery(WAIT),
    ApiOkResponse(STREAMED),
  );

export const StreamPostDocs = () =>
  applyDecorators(
    ApiOperation({ summary: "Read the job's streamed output (POST, as RunPod's Go SDK sends it)" }),
    ApiQuery(WAIT),
    ApiOkResponse(STREAMED),
  );
