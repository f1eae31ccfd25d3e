import {
  Body,
  Controller,
  Get,
  Param,
  Post,
  Req,
  Res,
  UseFilters,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { RunplaneError, type Principal } from '@runplane/contracts';
import { ApiWildcardPaths } from '@runplane/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitedOperation, QueueLimitsInterceptor } from '../limits/queue-limits.interceptor.js';
import { OpenAiErrorFilter } from './openai-error.filter.js';
import { OpenAiService } from './openai.service.js';

/** `/v1/...` after `/v2/{endpointId}/openai` (query excluded): the job's `openai_route`. */
function openAiRoute(url: string): string {
  const route = /^\/v2\/[^/?]+\/openai(\/[^?]*)/.exec(url)?.[1];
  if (!route || route === '/') throw RunplaneError.notFound(`no route ${url.split('?')[0]}`);
  return route;
}

/**
 * OpenAI-compatible route of an endpoint: `base_url = .../v2/{endpointId}/openai/v1`.
 * Both methods submit a job, so both need a key that may write.
 */
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

@ApiTags('OpenAI-compatible')
@ApiResponse({ status: 'default', ...OPENAI_ERROR })
@Controller('v2/:endpointId/openai')
@UseInterceptors(QueueLimitsInterceptor)
@UseFilters(OpenAiErrorFilter)
@LimitedOperation('openai')
@RequireAccess('write')
export class OpenAiController {
  constructor(private readonly openai: OpenAiService) {}

  @Post('*')
  @ApiWildcardPaths('v1/chat/completions', 'v1/completions', 'v1/responses')
  @ApiOperation({
    summary: 'OpenAI API request, run as a job',
    description:
      'The job input is `{openai_route: "/v1/...", openai_input: <body>}`; with `"stream": true` the strings the worker streams are relayed as `text/event-stream`, otherwise the first element of its output list (or the output) is the answer. Point an OpenAI client at `base_url = .../v2/{endpointId}/openai/v1`.',
  })
  @ApiBody({
    description: 'The OpenAI request body, passed to the worker as is.',
    schema: { type: 'object' },
    examples: {
      chatCompletions: {
        summary: 'v1/chat/completions',
        value: { model: 'my-model', messages: [{ role: 'user', content: 'Hello' }], stream: true },
      },
      completions: {
        summary: 'v1/completions',
        value: { model: 'my-model', prompt: 'Hello', max_tokens: 16 },
      },
      responses: { summary: 'v1/responses', value: { model: 'my-model', input: 'Hello' } },
    },
  })
  @ApiOkResponse({
    description: "The worker's answer, or its SSE stream.",
    content: {
      'application/json': { schema: { type: 'object' } },
      'text/event-stream': { schema: { type: 'string' } },
    },
  })
  post(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.openai.relay(principal, endpointId, openAiRoute(request.url), body ?? {}, reply);
  }

  /** `GET /models` and friends: the job input has no `openai_input`. */
  @Get('*')
  @ApiWildcardPaths('v1/models')
  @ApiOperation({
    summary: "OpenAI API read (e.g. the worker's models), run as a job",
    description: 'The job input is `{openai_route: "/v1/..."}`.',
  })
  @ApiOkResponse({ description: "The worker's answer.", schema: { type: 'object' } })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.openai.relay(principal, endpointId, openAiRoute(request.url), undefined, reply);
  }
}
