import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in worker.controller.ts, one decorator per route.
// Parameters are documented in the order they are listed.

const JOB_ID_IN_URL =
  'The job id is the last path segment, or (without it, or as a literal `$ID`) the `X-Request-ID` header.';
const NOTHING = 'Nothing within the long poll (up to 30 s); empty body.';

export const WorkerControllerDocs = () =>
  applyDecorators(ApiTags('Worker protocol'), ApiErrors(404));

export const TakeDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Take the next job (long poll)',
      description:
        'Claims the oldest queued job for this worker. A job not delivered (connection gone) goes back to the queue.',
    }),
    ApiOkResponse({ description: 'One job.', schema: schemaRef('WorkerJob') }),
    ApiNoContentResponse({ description: NOTHING }),
  );

export const TakeBatchDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Take up to `batch_size` jobs (long poll)' }),
    ApiQuery({
      name: 'batch_size',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 1 },
    }),
    ApiOkResponse({ description: 'The jobs.', schema: listOf('WorkerJob') }),
    ApiNoContentResponse({ description: NOTHING }),
  );

export const DoneDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "Post a job's result, error or progress",
      description: `${JOB_ID_IN_URL} The body is JSON whatever its content type; a repeated final post changes nothing.`,
    }),
    ApiQuery({
      name: 'isStream',
      required: false,
      description:
        '`true` when the handler streamed its output: the result is then the streamed chunks.',
      schema: { type: 'boolean' },
    }),
    ApiBody({ schema: schemaRef('JobDoneBody') }),
    ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') }),
    ApiErrors(400),
  );

export const StreamDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Post one chunk of streamed output', description: JOB_ID_IN_URL }),
    ApiBody({
      schema: {
        type: 'object',
        properties: { output: {} },
        description: 'Normally `{output}`; kept as sent.',
      },
    }),
    ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') }),
    ApiErrors(400),
  );

export const PingDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Heartbeat',
      description:
        'A worker silent for 3 ping intervals is unhealthy and its running jobs go back to the queue.',
    }),
    ApiQuery({
      name: 'status',
      required: false,
      description:
        '`unhealthy`: the worker failed its fitness checks and is about to exit (`check`, `reason` say why).',
      schema: { type: 'string', enum: ['unhealthy'] },
    }),
    ApiQuery({
      name: 'job_id',
      required: false,
      description: 'The jobs in progress, comma-separated.',
      schema: { type: 'string' },
    }),
    ApiOkResponse({ description: 'Recorded.', schema: schemaRef('Ack') }),
  );

export const StopDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Jobs to abandon (long poll)',
      description: 'Jobs of this worker that were cancelled, timed out or expired meanwhile.',
    }),
    ApiOkResponse({ description: 'The jobs to stop.', schema: schemaRef('StopJobsResponse') }),
    ApiNoContentResponse({ description: NOTHING }),
  );
