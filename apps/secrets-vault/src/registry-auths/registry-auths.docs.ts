import { applyDecorators } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in registry-auths.controller.ts, one decorator per route.

export const RegistryAuthsControllerDocs = () =>
  applyDecorators(ApiTags('Container registry auths'));

export const CreateRegistryAuthDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Create a container registry auth',
      description:
        'Credentials for a private registry, named by templates and Pods through `containerRegistryAuthId`. The username and password are stored sealed and never returned.',
    }),
    ApiOkResponse({
      description: 'The auth (id and name).',
      schema: schemaRef('ContainerRegistryAuth'),
    }),
    ApiError(409, 'The name is taken by another of your registry auths.'),
  );

export const ListRegistryAuthsDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'List your container registry auths' }),
    ApiOkResponse({ description: 'Id and name of each.', schema: listOf('ContainerRegistryAuth') }),
  );

export const GetRegistryAuthDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Get a container registry auth' }),
    ApiOkResponse({ description: 'Its id and name.', schema: schemaRef('ContainerRegistryAuth') }),
    ApiErrors(404),
  );

export const DeleteRegistryAuthDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Delete a container registry auth' }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiErrors(404),
  );
