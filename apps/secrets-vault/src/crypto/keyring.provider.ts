import type { Provider } from '@nestjs/common';
import { environmentOf, LOGGER, RunplaneConfig, type Logger } from '@runplane/platform';
import { MasterKeyring } from './master-keyring.js';

/** The vault's keyring, loaded once at start; a missing or malformed key stops the start with a clear message. */
export const keyringProvider: Provider = {
  provide: MasterKeyring,
  inject: [RunplaneConfig, LOGGER],
  useFactory: (config: RunplaneConfig, logger: Logger) => {
    const keyring = MasterKeyring.fromEnvironment(environmentOf(config), config.RUNPLANE_DATA_DIR);
    logger.info(
      { keyId: keyring.currentKeyId, source: keyring.source, file: keyring.location },
      'secrets-vault master key loaded',
    );
    if (keyring.source === 'ephemeral')
      logger.warn(
        'secrets-vault uses a master key kept in memory only: secrets do not survive a restart',
      );
    return keyring;
  },
};
