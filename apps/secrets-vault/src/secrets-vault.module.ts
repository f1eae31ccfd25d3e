import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { ApiKeysBusController } from './apikeys/apikeys.bus-controller.js';
import { ApiKeysRepository } from './apikeys/apikeys.repository.js';
import { ApiKeysService } from './apikeys/apikeys.service.js';
import { PrismaClient } from './generated/prisma/client.js';

export const SECRETS_VAULT_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

@Module({
  imports: [DatabaseModule.forService({ service: 'secrets-vault', client: PrismaClient, migrationsDir: SECRETS_VAULT_MIGRATIONS })],
  controllers: [ApiKeysBusController],
  providers: [ApiKeysService, ApiKeysRepository],
})
export class SecretsVaultModule {}
