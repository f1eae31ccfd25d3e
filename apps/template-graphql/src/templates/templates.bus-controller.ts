import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import {
  CreateTemplateRequest,
  ListTemplatesRequest,
  TemplateGetRequest,
  TemplateRpc,
  TemplateScopedRequest,
  UpdateTemplateRequest,
} from '@runplane/contracts';
import { TemplatesService } from './templates.service.js';

/** Template operations as other services (pod-rest's /v1/templates, the scheduler) call them. */
@Controller()
export class TemplatesBusController {
  constructor(private readonly templates: TemplatesService) {}

  @OnRpc(TemplateRpc.create)
  create(@Payload() request: CreateTemplateRequest) {
    return this.templates.create(request.ownerId, request.template);
  }

  @OnRpc(TemplateRpc.list)
  list(@Payload() request: ListTemplatesRequest) {
    return this.templates.list(request.ownerId, request.includePublicTemplates ?? false);
  }

  @OnRpc(TemplateRpc.get)
  get(@Payload() request: TemplateGetRequest) {
    return this.templates.getRevision(
      request.ownerId,
      request.templateId,
      request.revision,
      request.withRevision,
    );
  }

  @OnRpc(TemplateRpc.update)
  update(@Payload() request: UpdateTemplateRequest) {
    return this.templates.update(request.ownerId, request.templateId, request.changes);
  }

  @OnRpc(TemplateRpc.delete)
  delete(@Payload() request: TemplateScopedRequest) {
    return this.templates.delete(request.ownerId, request.templateId);
  }
}
