import { Module } from '@nestjs/common';
import { DatabaseModule, outboxRelayProvider } from '@runplane/database';
import { TemplateEvents } from '@runplane/contracts';
import { LOGGER } from '@runplane/platform';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';
import { TemplatesBusController } from './templates/templates.bus-controller.js';
import { TemplatesRepository } from './templates/templates.repository.js';
import { TemplatesService } from './templates/templates.service.js';

export const TEMPLATE_GRAPHQL_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** template-graphql owns templates (bus operations now; the GraphQL API arrives with its issue). */
@Module({
  imports: [DatabaseModule.forService({ service: 'template-graphql', client: PrismaClient, migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS })],
  controllers: [TemplatesBusController],
  providers: [
    TemplatesService, TemplatesRepository,
    outboxRelayProvider({ service: 'template-graphql', client: PrismaClient, events: [TemplateEvents.updated], logger: LOGGER }),
  ],
})
export class TemplateGraphqlModule {}
