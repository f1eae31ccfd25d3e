import type { ServiceDescriptor } from '@runplane/platform';
import { TEMPLATE_GRAPHQL_MIGRATIONS, TemplateGraphqlModule } from './template-graphql.module.js';

export { TemplateGraphqlModule } from './template-graphql.module.js';

/** template-graphql owns templates and serves the GraphQL API for templates and secrets. */
export const templateGraphqlService: ServiceDescriptor = {
  name: 'template-graphql',
  module: TemplateGraphqlModule,
  defaultPort: 8085,
  migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS,
};
