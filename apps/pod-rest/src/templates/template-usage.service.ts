import { Injectable } from '@nestjs/common';
import type { TemplatePodUsage } from '@runplane/contracts';
import { PodsRepository } from '../pods/pods.repository.js';

/** For template-graphql's delete rules: which Pods use a template, and when one last stopped using it. */
@Injectable()
export class TemplateUsageService {
  constructor(private readonly pods: PodsRepository) {}

  async usage(templateId: string): Promise<TemplatePodUsage> {
    const { inUse, lastExitedAt } = await this.pods.templateUsage(templateId);
    return { pods: inUse, lastUsedAt: lastExitedAt?.toISOString() ?? null };
  }
}
