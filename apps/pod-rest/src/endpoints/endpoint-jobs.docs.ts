import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in endpoint-jobs.controller.ts, one decorator per route.

export const EndpointJobsControllerDocs = () => applyDecorators(ApiTags('Endpoints'));

export const JobDetailDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'A job with its input',
      description:
        "The job's `/status` record plus what was submitted with it: `input`, `createdAt`, `mode` (`run` or `runsync`) and `webhook`. For the job's owner (any of the user's keys, readonly included); `/status` never returns the input. Not part of RunPod's API.",
    }),
    ApiOkResponse({ description: 'The job.', schema: schemaRef('JobDetail') }),
    ApiErrors(404),
  );

export const JobEventsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "A job's history",
      description:
        "Every transition of the job, oldest first: SUBMITTED, TAKEN (by `workerId`), PROGRESS (at most one every few seconds), REQUEUED (`detail`: why: worker lost, unhealthy, exited, stopped, job-take answer given back), RETRIED, STOP_SENT (a job-stop for its worker: cancelled, timed-out, ttl elapsed), then COMPLETED, FAILED, CANCELLED, TIMED_OUT or EXPIRED. Never the job's input or output. Kept as long as the job.",
    }),
    ApiOkResponse({ description: 'Its events, oldest first.', schema: listOf('JobEvent') }),
    ApiErrors(404),
  );
