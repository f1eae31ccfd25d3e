import { Controller } from '@nestjs/common';
import { Ctx, Payload } from '@nestjs/microservices';
import { BusContext, OnEvent, OnRpc } from '@runplane/bus';
import {
  CreateEndpointRequest,
  EndpointScopedRequest,
  OwnedRequest,
  SchedulerRpc,
  TemplateEvents,
  TemplateReleaseRequest,
  TemplateUpdatedEvent,
  TemplateUsageRequest,
  UpdateEndpointRequest,
} from '@runplane/contracts';
import { EndpointsService } from './endpoints.service.js';

/** Endpoint CRUD as pod-rest's /v1/endpoints calls it, and template changes from template-graphql. */
@Controller()
export class EndpointsBusController {
  constructor(private readonly endpoints: EndpointsService) {}

  @OnRpc(SchedulerRpc.createEndpoint)
  create(@Payload() request: CreateEndpointRequest) {
    return this.endpoints.create(request);
  }

  @OnRpc(SchedulerRpc.listEndpoints)
  list(@Payload() request: OwnedRequest) {
    return this.endpoints.list(request);
  }

  @OnRpc(SchedulerRpc.getEndpoint)
  get(@Payload() request: EndpointScopedRequest) {
    return this.endpoints.get(request);
  }

  @OnRpc(SchedulerRpc.updateEndpoint)
  update(@Payload() request: UpdateEndpointRequest) {
    return this.endpoints.update(request);
  }

  @OnRpc(SchedulerRpc.deleteEndpoint)
  delete(@Payload() request: EndpointScopedRequest) {
    return this.endpoints.delete(request);
  }

  @OnRpc(SchedulerRpc.templateUsage)
  templateUsage(@Payload() request: TemplateUsageRequest) {
    return this.endpoints.templateUsage(request);
  }

  /** The same rolling release, asked for directly by template-graphql before it answers an update. */
  @OnRpc(SchedulerRpc.releaseTemplate)
  async releaseTemplate(@Payload() request: TemplateReleaseRequest) {
    await this.endpoints.templateUpdated(request, request.eventId);
    return { ok: true as const };
  }

  /** Rolling release: the template owner's endpoints on it get a new version, once per event. */
  @OnEvent(TemplateEvents.updated, 'scheduler')
  templateUpdated(@Payload() event: TemplateUpdatedEvent, @Ctx() ctx: BusContext) {
    return this.endpoints.templateUpdated(event, ctx.getHeaders()['runplane-event-id']);
  }
}
