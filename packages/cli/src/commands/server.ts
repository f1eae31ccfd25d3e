// `runplane start` and `runplane migrate`: main.ts loads this module (and the server with it) only
// for them.

import path from 'node:path';
import {
  databaseUrlVariable,
  EmbeddedPostgres,
  embeddedTarget,
  migrateTarget,
  postgresTarget,
} from '@runplane/database';
import {
  createLogger,
  loadConfig,
  startRunplane,
  type ServiceDescriptor,
} from '@runplane/platform';

export async function start(services: ServiceDescriptor[], allInOne: boolean): Promise<number> {
  if (!allInOne) applyLocalClusterDefaults(services[0]);
  const server = await startRunplane({ services, allInOne });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A supervisor may repeat SIGTERM; a second Ctrl-C means "now".
        if (signal === 'SIGINT') {
          server.logger.warn('second interrupt: exiting without finishing the graceful shutdown');
          server.logger.flush();
          process.exit(130);
        }
        return;
      }
      stopping = true;
      server.logger.info({ signal }, 'signal received');
      server.stop().then(resolve, (err) => {
        server.logger.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  server.logger.flush();
  return 0;
}

/**
 * `npm run start:<service>` on a developer machine: point at the local NATS and PostgreSQL unless
 * told otherwise. Never in production, where a missing setting must fail loudly.
 */
function applyLocalClusterDefaults(service: ServiceDescriptor): void {
  if (process.env.NODE_ENV === 'production') return;
  const dbVar = databaseUrlVariable(service.name);
  if (!process.env.NATS_URL) {
    process.env.NATS_URL = 'nats://127.0.0.1:4222';
    process.stderr.write(
      `runplane: NATS_URL not set; using ${process.env.NATS_URL} (local development default)\n`,
    );
  }
  if (!process.env[dbVar] && !process.env.DATABASE_URL) {
    process.env[dbVar] =
      `postgresql://postgres@127.0.0.1:5432/runplane_${service.name.replace(/-/g, '_')}`;
    process.stderr.write(
      `runplane: ${dbVar} not set; using ${process.env[dbVar]} (local development default)\n`,
    );
  }
}

/** Applies migrations to each service's database (Kubernetes runs this as an init container). */
export async function migrate(services: ServiceDescriptor[]): Promise<number> {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL });
  const log = { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m) };
  let embedded: EmbeddedPostgres | undefined;
  try {
    for (const service of services) {
      const url = process.env[databaseUrlVariable(service.name)] || config.DATABASE_URL;
      if (!url) embedded ??= await EmbeddedPostgres.open(path.resolve(config.RUNPLANE_DATA_DIR));
      await migrateTarget(
        url ? postgresTarget(service.name, url) : embeddedTarget(service.name, embedded!),
        service.migrationsDir,
        log,
      );
    }
    return 0;
  } finally {
    await embedded?.close();
  }
}
