import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, RequireAccess } from '@runplane/auth';
import { ListWebhookDeliveriesQuery, type Principal } from '@runplane/contracts';
import {
  DeliveriesControllerDocs,
  GetDeliveryDocs,
  ListDeliveriesDocs,
  RedeliverDocs,
  SigningSecretDocs,
} from './deliveries.docs.js';
import { DeliveriesService } from './deliveries.service.js';

/**
 * The caller's job webhooks: every delivery with every attempt, newest first (at most 100; filter
 * with `?jobId=`), one delivery, redelivery, and the signing secret to verify them.
 */
@DeliveriesControllerDocs()
@Controller('v1/webhooks')
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('deliveries')
  @ListDeliveriesDocs()
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListWebhookDeliveriesQuery) {
    return this.deliveries.list(principal.userId, query.jobId);
  }

  @Get('deliveries/:id')
  @GetDeliveryDocs()
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.deliveries.get(principal.userId, id);
  }

  @Post('deliveries/:id/redeliver')
  @RedeliverDocs()
  @HttpCode(200)
  redeliver(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.deliveries.redeliver(principal.userId, id);
  }

  /** `{key: "whsec_..."}`: shown to the account's own readwrite/admin keys only. */
  @Get('secret')
  @SigningSecretDocs()
  @RequireAccess('write')
  secret(@CurrentPrincipal() principal: Principal) {
    return this.deliveries.signingSecret(principal.userId);
  }
}
