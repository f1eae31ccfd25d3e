import type { ServiceDescriptor } from '@runplane/platform';
import { GRAPHQL_OPENAPI_PATHS } from './graphql/graphql-docs.js';
import { TEMPLATE_GRAPHQL_MIGRATIONS, TemplateGraphqlModule } from './template-graphql.module.js';

export { TemplateGraphqlModule } from './template-graphql.module.js';
export { printGraphqlSchema } from './graphql/graphql-docs.js';

/** template-graphql owns templates and serves the GraphQL API for templates and secrets. */
export const templateGraphqlService: ServiceDescriptor = {
  name: 'template-graphql',
  module: TemplateGraphqlModule,
  defaultPort: 8085,
  migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'GraphQL',
        description: 'Templates and secrets, RunPod style; the schema is docs/schema.graphql.',
      },
    ],
    paths: GRAPHQL_OPENAPI_PATHS,
  },
};
