import { Module } from '@nestjs/common';
import { DatabaseModule, outboxRelayProvider } from '@runplane/database';
import { TemplateEvents } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';
import { GraphqlApiModule } from './graphql/graphql-api.js';
import { MyselfResolver } from './graphql/myself.resolver.js';
import { SecretsClient } from './graphql/secrets.client.js';
import { SecretsResolver } from './graphql/secrets.resolver.js';
import { TemplatesResolver } from './graphql/templates.resolver.js';
import { AccountResolver } from './management/account.resolver.js';
import { CatalogueResolver } from './management/catalogue.resolver.js';
import { EndpointsResolver } from './management/endpoints.resolver.js';
import {
  CatalogueClient,
  EndpointsClient,
  PodsClient,
  RegistryAuthsClient,
  UsersClient,
} from './management/management.clients.js';
import { RegistryAuthsResolver } from './management/registry-auths.resolver.js';
import { PodsResolver } from './management/pods.resolver.js';
import { TemplateSettings } from './settings.js';
import { TemplateUsage } from './templates/template-usage.js';
import { TemplatesBusController } from './templates/templates.bus-controller.js';
import { TemplatesRepository } from './templates/templates.repository.js';
import { TemplatesService } from './templates/templates.service.js';

export const TEMPLATE_GRAPHQL_MIGRATIONS = fileURLToPath(
  new URL('../prisma/migrations', import.meta.url),
);

/**
 * template-graphql owns templates (bus operations for pod-rest's REST API and the scheduler) and
 * serves the GraphQL API (`/graphql`): templates, and RunPod's management operations on what other
 * services own (secrets and users in the vault, Pods and the catalogue in pod-rest, endpoints in
 * the scheduler), which it reaches over the bus.
 */
@Module({
  imports: [
    DatabaseModule.forService({
      service: 'template-graphql',
      client: PrismaClient,
      migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS,
    }),
    GraphqlApiModule,
  ],
  controllers: [TemplatesBusController],
  providers: [
    TemplatesService,
    TemplatesRepository,
    TemplateUsage,
    TemplateSettings,
    TemplatesResolver,
    SecretsResolver,
    MyselfResolver,
    SecretsClient,
    // RunPod's management API: other services' operations through GraphQL (src/management).
    AccountResolver,
    PodsResolver,
    CatalogueResolver,
    EndpointsResolver,
    RegistryAuthsResolver,
    PodsClient,
    RegistryAuthsClient,
    CatalogueClient,
    EndpointsClient,
    UsersClient,
    outboxRelayProvider({
      service: 'template-graphql',
      client: PrismaClient,
      events: [TemplateEvents.updated],
      logger: LOGGER,
    }),
  ],
})
export class TemplateGraphqlModule {}
