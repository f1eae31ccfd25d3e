import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { OnRpc } from '@runplane/bus';
import { PodRpc, TemplateUsageRequest } from '@runplane/contracts';
import { TemplateUsageService } from './template-usage.service.js';

@Controller()
export class TemplateUsageBusController {
  constructor(private readonly usage: TemplateUsageService) {}

  /** Asked by template-graphql before it deletes a template (as on RunPod: not while a Pod uses it). */
  @OnRpc(PodRpc.templateUsage)
  templateUsage(@Payload() request: TemplateUsageRequest) {
    return this.usage.usage(request.templateId);
  }
}
