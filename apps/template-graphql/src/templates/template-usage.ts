import { Inject, Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import {
  PodRpc,
  RunplaneError,
  SchedulerRpc,
  type TemplatePodUsage,
  type TemplateUsageResponse,
} from '@runplane/contracts';
import { LOGGER, type Logger } from '@runplane/platform';
import { TemplateSettings } from '../settings.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * When deleteTemplate refuses: a template cannot go while a serverless endpoint (the
 * scheduler knows) or a Pod (pod-rest knows) uses it, nor until `deleteDelayMs` (2 minutes) after
 * a Pod last stopped running it. Users of every account count: a public template may run elsewhere.
 */
@Injectable()
export class TemplateUsage {
  constructor(
    private readonly bus: Bus,
    private readonly settings: TemplateSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Throws 409 saying why the template cannot be deleted now, or 503 when that cannot be checked. */
  async assertDeletable(template: { id: string; name: string }, now = Date.now()): Promise<void> {
    let endpoints: TemplateUsageResponse;
    let pods: TemplatePodUsage;
    try {
      [endpoints, pods] = await Promise.all([
        this.bus.request(
          SchedulerRpc.templateUsage,
          { templateId: template.id },
          { timeoutMs: 5000 },
        ),
        this.bus.request(PodRpc.templateUsage, { templateId: template.id }, { timeoutMs: 5000 }),
      ]);
    } catch (err) {
      this.logger.warn(
        { templateId: template.id, err: String(err) },
        'could not check whether a template is in use',
      );
      throw RunplaneError.unavailable(
        `template "${template.name}" was not deleted: whether it is in use cannot be checked right now; try again`,
      );
    }
    const users = [
      endpoints.endpoints && plural(endpoints.endpoints, 'serverless endpoint'),
      pods.pods && plural(pods.pods, 'Pod'),
    ].filter(Boolean);
    if (users.length) {
      throw RunplaneError.conflict(
        `template "${template.name}" is in use by ${users.join(' and ')}: ` +
          'delete them (or move endpoints to another template) first',
        'TEMPLATE_IN_USE',
      );
    }
    if (pods.lastUsedAt) {
      const allowedFrom = Date.parse(pods.lastUsedAt) + this.settings.deleteDelayMs;
      if (now < allowedFrom) {
        throw RunplaneError.conflict(
          `template "${template.name}" was used by a Pod until ${pods.lastUsedAt}; a template can be deleted ` +
            `${Math.round(this.settings.deleteDelayMs / 1000)} s after its most recent use, from ${new Date(allowedFrom).toISOString()}`,
          'TEMPLATE_RECENTLY_USED',
        );
      }
    }
  }
}
