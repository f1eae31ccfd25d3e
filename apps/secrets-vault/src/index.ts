import type { ServiceDescriptor } from '@runplane/platform';
import { SECRETS_VAULT_MIGRATIONS, SecretsVaultModule } from './secrets-vault.module.js';

export { SecretsVaultModule } from './secrets-vault.module.js';

/** secrets-vault: users, API keys (hashed) and secrets (encrypted). */
export const secretsVaultService: ServiceDescriptor = {
  name: 'secrets-vault',
  module: SecretsVaultModule,
  defaultPort: 8086,
  migrationsDir: SECRETS_VAULT_MIGRATIONS,
  openApi: {
    tags: [
      {
        name: 'Users and API keys',
        description:
          'Users and their API keys: keys are shown once, stored hashed, never wider than their creator.',
      },
      {
        name: 'Container registry auths',
        description:
          'Credentials for private container registries, named by templates and Pods through `containerRegistryAuthId`; stored sealed, never returned.',
      },
    ],
  },
};
