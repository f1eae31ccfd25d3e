import {
  Body,
  Controller,
  Get,
  Param,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { RunplaneError, type Principal } from '@runplane/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitedOperation, QueueLimitsGuard } from '../limits/queue-limits.guard.js';
import { OpenAiErrorFilter } from './openai-error.filter.js';
import { OpenAiControllerDocs, OpenAiGetDocs, OpenAiPostDocs } from './openai.docs.js';
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
@OpenAiControllerDocs()
@Controller('v2/:endpointId/openai')
@UseGuards(QueueLimitsGuard)
@UseFilters(OpenAiErrorFilter)
@LimitedOperation('openai')
@RequireAccess('write')
export class OpenAiController {
  constructor(private readonly openai: OpenAiService) {}

  @Post('*')
  @OpenAiPostDocs()
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
  @OpenAiGetDocs()
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('endpointId') endpointId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    return this.openai.relay(principal, endpointId, openAiRoute(request.url), undefined, reply);
  }
}
