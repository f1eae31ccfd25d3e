import { Injectable } from '@nestjs/common';
import { environmentOf, intSetting, RunplaneConfig } from '@runplane/platform';
import type { DocumentLimits } from './graphql/document-limits.js';

/** A template whose last Pod stopped less than this ago cannot be deleted yet (its Pods may still be restarted from it). */
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

/**
 * What one GraphQL document may ask for. The defaults let RunPod's clients (a few levels, a few
 * dozen fields) and the standard introspection query (15 levels, about 230 fields) through.
 */
export function graphqlLimits(config: RunplaneConfig): DocumentLimits {
  const env = environmentOf(config);
  return {
    tokens: intSetting(env, 'RUNPLANE_GRAPHQL_MAX_TOKENS', 5000, 100, 1_000_000),
    depth: intSetting(env, 'RUNPLANE_GRAPHQL_MAX_DEPTH', 15, 2, 1000),
    aliases: intSetting(env, 'RUNPLANE_GRAPHQL_MAX_ALIASES', 30, 0, 100_000),
    fields: intSetting(env, 'RUNPLANE_GRAPHQL_MAX_FIELDS', 500, 1, 1_000_000),
    rootFields: intSetting(env, 'RUNPLANE_GRAPHQL_MAX_ROOT_FIELDS', 20, 1, 100_000),
  };
}
