import { Injectable } from '@nestjs/common';
import { environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';

/** A template whose last Pod stopped less than this ago cannot be deleted yet (spec deleteTemplate rule 3). */
export const DEFAULT_TEMPLATE_DELETE_DELAY_MS = 120_000;

/** template-graphql's own settings (docs/configuration.md); no other service reads them. */
@Injectable()
export class TemplateSettings {
  readonly deleteDelayMs: number;

  constructor(config: RunplaneConfig) {
    this.deleteDelayMs = intSetting(
      environmentOf(config),
      'RUNPLANE_TEMPLATE_DELETE_DELAY_MS',
      DEFAULT_TEMPLATE_DELETE_DELAY_MS,
      0,
      86_400_000,
    );
  }
}
