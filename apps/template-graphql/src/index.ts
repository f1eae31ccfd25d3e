import type { ServiceDescriptor } from '@runplane/platform';
import { GRAPHQL_OPENAPI_PATHS } from './graphql/graphql-docs.js';
import { TEMPLATE_GRAPHQL_MIGRATIONS, TemplateGraphqlModule } from './template-graphql.module.js';

export { TemplateGraphqlModule } from './template-graphql.module.js';
export { printGraphqlSchema } from './graphql/graphql-docs.js';

/** template-graphql owns templates and serves the GraphQL API (templates, secrets, RunPod's management operations). */
export const templateGraphqlService: ServiceDescriptor = {
  name: 'template-graphql',
  module: TemplateGraphqlModule,
  defaultPort: 8085,
  migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'GraphQL',
        description:
          "RunPod's GraphQL API: templates, secrets and the management operations of runpodctl and runpod-python; the schema is docs/schema.graphql.",
      },
    ],
    paths: GRAPHQL_OPENAPI_PATHS,
  },
};
