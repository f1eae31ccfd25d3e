import { applyDecorators } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in endpoints.controller.ts, one decorator per route.

/** An endpoint, with its template under `template` when `includeTemplate=true`. */
const WITH_TEMPLATE = {
  allOf: [
    schemaRef('Endpoint'),
    { type: 'object', properties: { template: schemaRef('Template') } },
  ],
};
const UPDATED = {
  description: 'The endpoint after the change (a new `version` when its workers must be replaced).',
  schema: schemaRef('Endpoint'),
};

export const EndpointsControllerDocs = () => applyDecorators(ApiTags('Endpoints'));

export const CreateEndpointDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Create a serverless endpoint',
      description:
        'Defaults: workersMin 0, workersMax 3, idleTimeout 5 s, scalerType QUEUE_DELAY, scalerValue 4, executionTimeoutMs 600000.',
    }),
    ApiOkResponse({ description: 'The endpoint.', schema: schemaRef('Endpoint') }),
    ApiError(400, 'Invalid field, or `templateId` names no template the caller may use.'),
    ApiError(503),
  );

export const ListEndpointsDocs = () =>
  applyDecorators(
    ApiOperation({ summary: "List the caller's endpoints" }),
    ApiOkResponse({
      description: 'The endpoints.',
      schema: { type: 'array', items: WITH_TEMPLATE },
    }),
  );

export const GetEndpointDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Get an endpoint' }),
    ApiOkResponse({ description: 'The endpoint.', schema: WITH_TEMPLATE }),
    ApiErrors(404),
  );

export const UpdateEndpointDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Update an endpoint', description: 'Only the fields given change.' }),
    ApiOkResponse(UPDATED),
    ApiErrors(404, 503),
  );

export const UpdateEndpointByPostDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Update an endpoint (POST form)',
      description: 'Only the fields given change.',
    }),
    ApiOkResponse(UPDATED),
    ApiErrors(404, 503),
  );

export const DeleteEndpointDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Delete an endpoint',
      description: 'Its queued and running jobs are cancelled and its workers stopped.',
    }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiErrors(404),
  );
