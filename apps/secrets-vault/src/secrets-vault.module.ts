import { Module } from '@nestjs/common';
import { DatabaseModule } from '@runplane/database';
import { fileURLToPath } from 'node:url';
import { ApiUsersController } from './apikeys/api-users.controller.js';
import { ApiUsersService } from './apikeys/api-users.service.js';
import { ApiKeysBusController } from './apikeys/apikeys.bus-controller.js';
import { ApiKeysRepository } from './apikeys/apikeys.repository.js';
import { ApiKeysService } from './apikeys/apikeys.service.js';
import { KeyRotation } from './crypto/key-rotation.service.js';
import { keyringProvider } from './crypto/keyring.provider.js';
import { PrismaClient } from './generated/prisma/client.js';
import { RegistryAuthsBusController } from './registry-auths/registry-auths.bus-controller.js';
import { RegistryAuthsController } from './registry-auths/registry-auths.controller.js';
import { RegistryAuthsRepository } from './registry-auths/registry-auths.repository.js';
import { RegistryAuthsService } from './registry-auths/registry-auths.service.js';
import { SecretsBusController } from './secrets/secrets.bus-controller.js';
import { SecretsRepository } from './secrets/secrets.repository.js';
import { SecretsService } from './secrets/secrets.service.js';
import { UsersBusController } from './users/users.bus-controller.js';
import { UsersRepository } from './users/users.repository.js';
import { UsersService } from './users/users.service.js';
import { WebhookSigningBusController } from './webhook-signing/webhook-signing.bus-controller.js';
import { WebhookSigningRepository } from './webhook-signing/webhook-signing.repository.js';
import { WebhookSigningService } from './webhook-signing/webhook-signing.service.js';

export const SECRETS_VAULT_MIGRATIONS = fileURLToPath(
  new URL('../prisma/migrations', import.meta.url),
);

@Module({
  imports: [
    DatabaseModule.forService({
      service: 'secrets-vault',
      client: PrismaClient,
      migrationsDir: SECRETS_VAULT_MIGRATIONS,
    }),
  ],
  controllers: [
    ApiUsersController,
    ApiKeysBusController,
    SecretsBusController,
    WebhookSigningBusController,
    UsersBusController,
    RegistryAuthsController,
    RegistryAuthsBusController,
  ],
  // MasterKeyring is exported for other vault features that keep values encrypted at rest.
  providers: [
    ApiKeysService,
    ApiUsersService,
    ApiKeysRepository,
    keyringProvider,
    KeyRotation,
    SecretsService,
    SecretsRepository,
    WebhookSigningService,
    WebhookSigningRepository,
    UsersService,
    UsersRepository,
    RegistryAuthsService,
    RegistryAuthsRepository,
  ],
  exports: [keyringProvider],
})
export class SecretsVaultModule {}
