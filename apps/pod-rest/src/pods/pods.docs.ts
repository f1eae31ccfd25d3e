import { applyDecorators } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in pods.controller.ts, one decorator per route.

const POD = { description: 'The Pod.', schema: schemaRef('Pod') };

const LOCKED = 'The Pod is locked (`locked: true`): unlock it first.';

export const PodsControllerDocs = () => applyDecorators(ApiTags('Pods'));

export const CreatePodDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Create and start a Pod',
      description: 'It needs an image: `imageName`, or a `templateId` whose image it takes.',
    }),
    ApiCreatedResponse(POD),
    ApiError(
      400,
      'Invalid field, no image, or a template, GPU type, CPU flavor or network volume that does not exist.',
    ),
  );

export const ListPodsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "List the caller's Pods",
      description:
        'Serverless workers only with `includeWorkers=true` (or an `endpointId` filter); at most 1000.',
    }),
    ApiOkResponse({ description: 'The Pods.', schema: listOf('Pod') }),
  );

export const GetPodDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Get a Pod',
      description:
        'The include flags add `machine`, `networkVolume`, `savingsPlans` and `template`; a serverless worker needs `includeWorkers=true`.',
    }),
    ApiOkResponse(POD),
    ApiErrors(404),
  );

export const UpdatePodDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Update a Pod',
      description:
        'A change to what runs (image, command, env, ports, disks) restarts a running Pod.',
    }),
    ApiOkResponse(POD),
    ApiErrors(404),
    ApiError(409, LOCKED),
  );

export const UpdatePodByPostDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Update a Pod (POST form)',
      description: 'A change to what runs restarts a running Pod.',
    }),
    ApiOkResponse(POD),
    ApiErrors(404),
    ApiError(409, LOCKED),
  );

export const DeletePodDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Terminate and delete a Pod' }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiErrors(404),
  );

export const StartPodDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Start a stopped Pod' }),
    ApiOkResponse(POD),
    ApiErrors(400, 404),
  );

export const StopPodDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Stop a Pod (its volume is kept)' }),
    ApiOkResponse(POD),
    ApiErrors(404),
    ApiError(409, LOCKED),
  );

export const RestartPodDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Restart a Pod' }),
    ApiOkResponse(POD),
    ApiErrors(400, 404),
  );

export const ResetPodDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Reset a Pod: restart it with its container disk wiped' }),
    ApiOkResponse(POD),
    ApiErrors(400, 404),
    ApiError(409, LOCKED),
  );
