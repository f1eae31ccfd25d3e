import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BusContext, OnEvent } from '@runplane/bus';
import { JobEvents, JobFinishedEvent } from '@runplane/contracts';
import { DeliveriesService } from './deliveries.service.js';

/** The durable consumer of `job.finished.v1` (group `webhook-sender`): acknowledged once the delivery is stored. */
@Controller()
export class DeliveriesBusController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @OnEvent(JobEvents.finished, 'webhook-sender', { concurrency: 32 })
  finished(@Payload() event: JobFinishedEvent, @Ctx() ctx: BusContext) {
    return this.deliveries.accept(event, ctx.getHeaders()['runplane-event-id']);
  }
}
