import { applyDecorators } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in api-users.controller.ts, one decorator per route.

export const ApiUsersControllerDocs = () => applyDecorators(ApiTags('Users and API keys'));

export const CreateUserDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Create a user' }),
    ApiOkResponse({ description: 'The user.', schema: schemaRef('User') }),
  );

export const ListUsersDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'List users' }),
    ApiOkResponse({ description: 'Every user.', schema: listOf('User') }),
  );

export const CreateKeyDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Create an API key',
      description:
        "`userId` defaults to the caller's user; only an admin may name another. A key is never wider than the caller's own; a `worker` key needs the `endpointId` whose worker routes it serves.",
    }),
    ApiOkResponse({
      description: 'The key, with its value `key` (shown only here).',
      schema: schemaRef('CreatedApiKey'),
    }),
    ApiErrors(404),
  );

export const ListKeysDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'List API keys (never their values)',
      description: "The caller's user's keys; an admin may ask for another user's with `userId`.",
    }),
    ApiQuery({ name: 'userId', required: false, schema: { type: 'string' } }),
    ApiOkResponse({ description: 'The keys.', schema: listOf('ApiKeyView') }),
  );

export const CurrentKeyDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'The API key of this request (never its value)',
      description:
        'Which user and scope the calling key has: what a client such as the console may offer to do with it.',
    }),
    ApiOkResponse({ description: 'The calling key.', schema: schemaRef('ApiKeyView') }),
  );

export const RevokeKeyDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Revoke an API key',
      description:
        'Effective within 5 s on every instance. A key revokes only keys no wider than its own (401 otherwise): only an admin key revokes admin keys.',
    }),
    ApiNoContentResponse({ description: 'Revoked.' }),
    ApiErrors(404),
    ApiError(
      409,
      "The key is the caller's own, or the bootstrap admin key (managed by RUNPLANE_API_KEY).",
    ),
  );
