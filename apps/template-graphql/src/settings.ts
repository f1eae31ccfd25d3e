import { Injectable } from '@nestjs/common';
import { RunplaneConfig } from '@runplane/platform';

/** A template whose last Pod stopped less than this ago cannot be deleted yet (spec deleteTemplate rule 3). */
export const DEFAULT_TEMPLATE_DELETE_DELAY_MS = 120_000;

/** template-graphql's own settings (docs/configuration.md); no other service reads them. */
@Injectable()
export class TemplateSettings {
  readonly deleteDelayMs: number;

  constructor(config: RunplaneConfig) {
    const env = (config as RunplaneConfig & { raw?: NodeJS.ProcessEnv }).raw ?? process.env;
    const raw = env.RUNPLANE_TEMPLATE_DELETE_DELAY_MS;
    const value = raw === undefined || raw === '' ? DEFAULT_TEMPLATE_DELETE_DELAY_MS : Number(raw);
    if (!Number.isInteger(value) || value < 0 || value > 86_400_000) {
      throw new Error(`invalid configuration: RUNPLANE_TEMPLATE_DELETE_DELAY_MS must be an integer from 0 to 86400000 (got ${JSON.stringify(raw)}). See docs/configuration.md.`);
    }
    this.deleteDelayMs = value;
  }
}
