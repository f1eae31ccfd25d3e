import { applyDecorators } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, listOf, schemaRef } from '@runplane/platform';

// The OpenAPI documentation of the routes in templates.controller.ts, one decorator per route.

const UPDATED = {
  description: 'The template after the change; endpoints using it get a rolling release.',
  schema: schemaRef('Template'),
};

export const TemplatesControllerDocs = () => applyDecorators(ApiTags('Templates'));

export const CreateTemplateDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Create a template' }),
    ApiOkResponse({ description: 'The template.', schema: schemaRef('Template') }),
    ApiError(409, 'The caller already has a template of that name.'),
  );

export const ListTemplatesDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "List the caller's templates",
      description: "`includePublicTemplates=true` adds other users' public templates.",
    }),
    ApiOkResponse({ description: 'The templates.', schema: listOf('Template') }),
  );

export const GetTemplateDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Get a template', description: "The caller's own or a public one." }),
    ApiOkResponse({ description: 'The template.', schema: schemaRef('Template') }),
    ApiErrors(404),
  );

export const UpdateTemplateDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Update a template', description: 'Only the fields given change.' }),
    ApiOkResponse(UPDATED),
    ApiErrors(404, 409),
  );

export const UpdateTemplateByPostDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Update a template (POST form, as RunPod names it)',
      description: 'Only the fields given change.',
    }),
    ApiOkResponse(UPDATED),
    ApiErrors(404, 409),
  );

export const DeleteTemplateDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Delete a template' }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiErrors(404),
    ApiError(
      409,
      'An endpoint or Pod uses the template, or a Pod ran it within the last 2 minutes.',
    ),
    ApiError(503),
  );
