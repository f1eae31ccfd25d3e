import { Bus, InProcessBus, NatsBus, SqlEventJournal } from '@runplane/bus';
import type { ServiceName } from '@runplane/contracts';
import {
  DatabaseTargets,
  EmbeddedPostgres,
  databaseUrlVariable,
  embeddedTarget,
  postgresTarget,
  type DatabaseTarget,
} from '@runplane/database';
import path from 'node:path';
import type { Logger } from 'pino';
import type { RunplaneConfig } from '../config/runplane-config.js';

/** The shared infrastructure of one process: its bus and where each service's data lives. */
export interface Runtime {
  bus: Bus;
  databases: DatabaseTargets;
  embedded?: EmbeddedPostgres;
  describe: string[];
  close(): Promise<void>;
}

/**
 * Chooses the run mode from configuration: NATS_URL → NATS JetStream bus, else the
 * in-process bus; a service with a database URL → that PostgreSQL, else the embedded database.
 * Only a process running ALL services may use the in-process bus and the embedded database.
 */
export async function createRuntime(
  services: ServiceName[],
  config: RunplaneConfig & { raw: NodeJS.ProcessEnv },
  logger: Logger,
  allInOne: boolean,
): Promise<Runtime> {
  const urls = new Map(
    services.map((s) => [s, config.raw[databaseUrlVariable(s)] || config.DATABASE_URL] as const),
  );
  const needsEmbedded = services.some((s) => !urls.get(s));
  if (!allInOne) {
    const missing = [
      !config.NATS_URL && 'NATS_URL',
      ...services
        .filter((s) => !urls.get(s))
        .map((s) => `${databaseUrlVariable(s)} (or DATABASE_URL)`),
    ].filter(Boolean);
    if (missing.length)
      throw new Error(
        `a service started on its own runs in cluster mode and needs ${missing.join(' and ')}`,
      );
  }

  const describe: string[] = [];
  // RUNPLANE_DATA_DIR=memory keeps everything in memory (tests, throw-away demos).
  const inMemory = config.RUNPLANE_DATA_DIR === 'memory';
  const dataDir = inMemory ? undefined : path.resolve(config.RUNPLANE_DATA_DIR);
  const embedded = needsEmbedded ? await EmbeddedPostgres.open(dataDir) : undefined;
  if (embedded) {
    describe.push(`embedded database ${dataDir ? `in ${dataDir}` : 'in memory'}`);
    embedded.startMaintenance(logger);
  }

  let bus: Bus;
  try {
    if (config.NATS_URL) {
      bus = await NatsBus.connect({
        servers: config.NATS_URL,
        name: `runplane-${services.length === 1 ? services[0] : 'all'}`,
        namespace: config.RUNPLANE_BUS_NAMESPACE,
        logger,
        replicas: config.RUNPLANE_NATS_REPLICAS,
      });
      describe.push(`NATS bus (namespace ${config.RUNPLANE_BUS_NAMESPACE})`);
    } else {
      // The in-process bus journals events in the embedded database so a crash loses none,
      // through its prepared statements: two writes per event, each parsed and planned anew
      // otherwise (docs/performance.md).
      const journal = embedded ? await SqlEventJournal.open(embedded.client) : undefined;
      bus = new InProcessBus({ journal, logger });
      describe.push(
        `in-process bus${journal ? ' (journal in the embedded database)' : ' (memory journal)'}`,
      );
    }
  } catch (err) {
    await embedded?.close();
    throw err;
  }

  const targets = new Map<ServiceName, DatabaseTarget>(
    services.map((s) => {
      const url = urls.get(s);
      return [s, url ? postgresTarget(s, url) : embeddedTarget(s, embedded!)];
    }),
  );
  const migrationLog = { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m) };
  const databases = new DatabaseTargets(
    (s) => {
      const t = targets.get(s);
      if (!t) throw new Error(`service ${s} is not part of this process`);
      return t;
    },
    config.RUNPLANE_MIGRATE_ON_START,
    migrationLog,
  );

  return {
    bus,
    databases,
    embedded,
    describe,
    close: async () => {
      await bus.close();
      await embedded?.close();
    },
  };
}
