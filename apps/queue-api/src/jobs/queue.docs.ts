import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { JobRequestDto } from '@runplane/contracts';
import { ApiError, ApiErrors, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in queue.controller.ts, one decorator per route.
// Query descriptions only: names, types and ranges come from the query DTOs.

export const JOB_NOT_FOUND =
  "Unknown endpoint or job, another user's, or a job removed when its TTL elapsed.";
export const JOB_ID_EXAMPLE = '5f2c6b9e-3d1a-4c8e-9b7f-2a6d4e8c1f03';
const WAIT = {
  name: 'wait',
  description:
    'How long the call waits for a final state, in ms (default 90000); not how long results are kept.',
};
const TTL = {
  name: 'ttl',
  description: "Sets the job's time to live, in ms counted from its submission.",
};
const IDEMPOTENCY_KEY = {
  name: 'idempotency-key',
  required: false,
  description: 'Per endpoint for 24 h: the same key returns the same job, never enqueued twice.',
};
const RUN_EXAMPLE = {
  value: {
    input: { prompt: 'Hello, world' },
    webhook: 'https://example.com/hook',
    policy: { executionTimeout: 600000, ttl: 86400000 },
  },
};
const JOB_RECORD = { description: 'The job record.', schema: schemaRef('JobRecord') };

export const QueueControllerDocs = () =>
  applyDecorators(ApiTags('Queue'), ApiError(404, JOB_NOT_FOUND));

export const RunDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Submit a job',
      description:
        'Queues the job and answers at once (body at most 10 MB). Results are kept 30 minutes after it finishes.',
    }),
    ApiBody({ type: JobRequestDto, examples: { job: RUN_EXAMPLE } }),
    ApiHeader(IDEMPOTENCY_KEY),
    ApiOkResponse({
      description: 'The job, `IN_QUEUE`.',
      schema: schemaRef('JobAccepted'),
      example: { id: JOB_ID_EXAMPLE, status: 'IN_QUEUE' },
    }),
    ApiErrors(413, 429),
  );

export const RunsyncDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Submit a job and wait for its result',
      description:
        'Waits up to `wait` ms (body at most 20 MB). A job still running then is answered `{id, status}` and keeps running (fetch it with /status); a finished one is kept 1 minute.',
    }),
    ApiBody({ type: JobRequestDto, examples: { job: RUN_EXAMPLE } }),
    ApiHeader(IDEMPOTENCY_KEY),
    ApiQuery(WAIT),
    ApiOkResponse({
      description: 'The job record: final, or `IN_QUEUE`/`IN_PROGRESS` when the wait elapsed.',
      schema: schemaRef('JobRecord'),
      example: {
        id: `sync-${JOB_ID_EXAMPLE}`,
        status: 'COMPLETED',
        delayTime: 824,
        executionTime: 3391,
        output: { text: 'Hello!' },
      },
    }),
    ApiErrors(413, 429),
  );

export const StatusDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Job status and result',
      description:
        "`?ttl=` sets the job's time to live, counted from its submission: a write, so it needs a readwrite (or admin) key (401 for a readonly key), and it must be longer than the job's age (400 otherwise; the job is kept). An expired job is 404.",
    }),
    ApiQuery(TTL),
    ApiOkResponse({
      ...JOB_RECORD,
      example: {
        id: JOB_ID_EXAMPLE,
        status: 'IN_PROGRESS',
        delayTime: 2100,
        workerId: 'w-1',
        retries: 0,
      },
    }),
    ApiError(429),
  );

export const StatusByPostDocs = () =>
  applyDecorators(
    ApiOperation({ summary: "Job status and result (POST, as RunPod's Go SDK sends it)" }),
    ApiQuery(TTL),
    ApiOkResponse(JOB_RECORD),
    ApiError(429),
  );

export const StatusSyncDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Job status, waiting for a final state',
      description:
        'Like /status, but blocks up to `wait` ms (default 90000) until the job is final.',
    }),
    ApiQuery(WAIT),
    ApiOkResponse(JOB_RECORD),
    ApiError(429),
  );

export const StatusSyncByPostDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Job status, waiting for a final state (POST)' }),
    ApiQuery(WAIT),
    ApiOkResponse(JOB_RECORD),
    ApiError(429),
  );

export const CancelDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Cancel a job',
      description:
        'A queued or running job becomes `CANCELLED` (its worker is told to stop); cancelling it again repeats the answer.',
    }),
    ApiOkResponse({
      description: '`{id, status: "CANCELLED"}`.',
      schema: schemaRef('JobAccepted'),
      example: { id: JOB_ID_EXAMPLE, status: 'CANCELLED' },
    }),
    ApiError(409, 'The job already completed, failed or timed out.'),
    ApiError(429),
  );

export const RetryDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Retry a failed job',
      description:
        'A `FAILED` or `TIMED_OUT` job whose results are still kept goes back to the queue with its input.',
    }),
    ApiOkResponse({
      description: '`{id, status: "IN_QUEUE"}`.',
      schema: schemaRef('JobAccepted'),
      example: { id: JOB_ID_EXAMPLE, status: 'IN_QUEUE' },
    }),
    ApiError(409, 'The job is not FAILED or TIMED_OUT, or its results were dropped.'),
  );

export const PurgeDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Remove every queued job',
      description: 'Only jobs waiting in the queue are removed; running jobs continue.',
    }),
    ApiOkResponse({
      description: 'How many jobs were removed.',
      schema: schemaRef('PurgeResponse'),
      example: { removed: 2, status: 'completed' },
    }),
    ApiError(429),
  );

export const HealthDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Job counts and workers of the endpoint' }),
    ApiOkResponse({
      description: 'The health record.',
      schema: schemaRef('HealthRecord'),
      example: {
        jobs: { completed: 12, failed: 1, inProgress: 1, inQueue: 3, retried: 0 },
        workers: { idle: 0, initializing: 0, ready: 0, running: 1, throttled: 0, unhealthy: 0 },
      },
    }),
  );

export const RequestsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "List the endpoint's jobs, newest first",
      description: "Page with `limit` (at most 100) and the previous answer's `nextCursor`.",
    }),
    ApiQuery({ name: 'cursor', description: 'The `nextCursor` of the previous page.' }),
    ApiOkResponse({ description: 'One page of jobs.', schema: schemaRef('ListJobsResponse') }),
    ApiError(429),
  );
