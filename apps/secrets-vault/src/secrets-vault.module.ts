import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { ApiKeysBusController } from './apikeys/apikeys.bus-controller.js';
import { ApiKeysRepository } from './apikeys/apikeys.repository.js';
import { ApiKeysService } from './apikeys/apikeys.service.js';
import { keyringProvider } from './crypto/keyring.provider.js';
import { PrismaClient } from './generated/prisma/client.js';
import { SecretsBusController } from './secrets/secrets.bus-controller.js';
import { SecretsRepository } from './secrets/secrets.repository.js';
import { SecretsService } from './secrets/secrets.service.js';

export const SECRETS_VAULT_MIGRATIONS = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

@Module({
  imports: [DatabaseModule.forService({ service: 'secrets-vault', client: PrismaClient, migrationsDir: SECRETS_VAULT_MIGRATIONS })],
  controllers: [ApiKeysBusController, SecretsBusController],
  // MasterKeyring is exported for other vault features that keep values encrypted at rest.
  providers: [ApiKeysService, ApiKeysRepository, keyringProvider, SecretsService, SecretsRepository],
  exports: [keyringProvider],
})
export class SecretsVaultModule {}
