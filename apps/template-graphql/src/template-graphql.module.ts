import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { PrismaClient } from './generated/prisma/client.js';

export const TEMPLATE_GRAPHQL_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** template-graphql owns templates and serves the GraphQL API for templates and secrets. Its behaviour arrives with its issue; for now it owns and migrates its database. */
@Module({
  imports: [DatabaseModule.forService({ service: 'template-graphql', client: PrismaClient, migrationsDir: TEMPLATE_GRAPHQL_MIGRATIONS })],
})
export class TemplateGraphqlModule {}
