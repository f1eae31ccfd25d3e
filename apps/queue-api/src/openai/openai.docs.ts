import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiWildcardPaths } from '@runplane/platform';

// The OpenAPI documentation of the routes in openai.controller.ts, one decorator per route.

/** OpenAI's own error shape: `{error: {message, type, param, code}}`. */
const OPENAI_ERROR = {
  description:
    'An OpenAI-shaped error: 400 invalid request, 401 key, 404 endpoint, 409 job cancelled, 429 limits (`Retry-After`), 500 the worker failed, 504 the job timed out.',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          error: {
            type: 'object',
            properties: {
              message: { type: 'string' },
              type: { type: 'string' },
              param: { type: ['string', 'null'] },
              code: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

export const OpenAiControllerDocs = () =>
  applyDecorators(
    ApiTags('OpenAI-compatible'),
    ApiResponse({ status: 'default', ...OPENAI_ERROR }),
  );

export const OpenAiPostDocs = () =>
  applyDecorators(
    ApiWildcardPaths('v1/chat/completions', 'v1/completions', 'v1/responses'),
    ApiOperation({
      summary: 'OpenAI API request, run as a job',
      description:
        'The job input is `{openai_route: "/v1/...", openai_input: <body>}`; with `"stream": true` the strings the worker streams are relayed as `text/event-stream`, otherwise the first element of its output list (or the output) is the answer. Point an OpenAI client at `base_url = .../v2/{endpointId}/openai/v1`.',
    }),
    ApiBody({
      description: 'The OpenAI request body, passed to the worker as is.',
      schema: { type: 'object' },
      examples: {
        chatCompletions: {
          summary: 'v1/chat/completions',
          value: {
            model: 'my-model',
            messages: [{ role: 'user', content: 'Hello' }],
            stream: true,
          },
        },
        completions: {
          summary: 'v1/completions',
          value: { model: 'my-model', prompt: 'Hello', max_tokens: 16 },
        },
        responses: { summary: 'v1/responses', value: { model: 'my-model', input: 'Hello' } },
      },
    }),
    ApiOkResponse({
      description: "The worker's answer, or its SSE stream.",
      content: {
        'application/json': { schema: { type: 'object' } },
        'text/event-stream': { schema: { type: 'string' } },
      },
    }),
  );

export const OpenAiGetDocs = () =>
  applyDecorators(
    ApiWildcardPaths('v1/models'),
    ApiOperation({
      summary: "OpenAI API read (e.g. the worker's models), run as a job",
      description: 'The job input is `{openai_route: "/v1/..."}`.',
    }),
    ApiOkResponse({ description: "The worker's answer.", schema: { type: 'object' } }),
  );
