import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { ListWebhookDeliveriesQuery, type Principal } from '@runplane/contracts';
import { ApiErrors, listOf, schemaRef } from '@runplane/platform';
import { DeliveriesService } from './deliveries.service.js';

/**
 * The caller's job webhooks: every delivery with every attempt, newest first (at most 100; filter
 * with `?jobId=`), one delivery, redelivery, and the signing secret to verify them.
 */
@ApiTags('Webhooks')
@Controller('v1/webhooks')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('deliveries')
  @ApiOperation({
    summary: "The caller's job webhooks, newest first",
    description: "At most 100; `jobId` filters one job's.",
  })
  @ApiOkResponse({
    description: 'Deliveries with every attempt.',
    schema: listOf('WebhookDeliveryView'),
  })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListWebhookDeliveriesQuery) {
    return this.deliveries.list(principal.userId, query.jobId);
  }

  @Get('deliveries/:id')
  @ApiOperation({
    summary: 'One webhook delivery',
    description: 'The id is the `webhook-id` header of its calls.',
  })
  @ApiOkResponse({
    description: 'The delivery with every attempt.',
    schema: schemaRef('WebhookDeliveryView'),
  })
  @ApiErrors(404)
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.deliveries.get(principal.userId, id);
  }

  @Post('deliveries/:id/redeliver')
  @ApiOperation({
    summary: 'Send a webhook again',
    description: 'Same body and `webhook-id`; a new round of attempts.',
  })
  @ApiOkResponse({
    description: 'The delivery, `pending` again.',
    schema: schemaRef('WebhookDeliveryView'),
  })
  @ApiErrors(404)
  @HttpCode(200)
  redeliver(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.deliveries.redeliver(principal.userId, id);
  }

  /** `{key: "whsec_..."}`: shown to the account's own readwrite/admin keys only. */
  @Get('secret')
  @ApiOperation({
    summary: "The signing secret of the caller's webhooks",
    description:
      'Verify the `webhook-signature` header with it (Standard Webhooks; `verifyWebhook` in @runplane/contracts).',
  })
  @ApiOkResponse({
    description: 'The secret.',
    schema: {
      type: 'object',
      properties: { key: { type: 'string', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } },
      required: ['key'],
    },
  })
  @RequireAccess('write')
  secret(@CurrentPrincipal() principal: Principal) {
    return this.deliveries.signingSecret(principal.userId);
  }
}
