import { parseArgs } from 'node:util';
import path from 'node:path';
import {
  databaseUrlVariable,
  EmbeddedPostgres,
  embeddedTarget,
  migrateTarget,
  postgresTarget,
} from '@runplane/database';
import {
  ConfigError,
  createLogger,
  loadConfig,
  startRunplane,
  type ServiceDescriptor,
} from '@runplane/platform';
import { ADMIN_HELP, runAdminCommand } from './commands/admin.js';
import { CLIENT_HELP } from './commands/common.js';
import { DOCS_HELP, runDocsCommand } from './commands/docs.js';
import { OPERATE_HELP, runOperateCommand } from './commands/operate.js';
import { QUEUE_HELP, runQueueCommand } from './commands/queue.js';
import { ALL_SERVICES, serviceByName } from './services.js';

const HELP = `runplane — self-hosted, RunPod-compatible serverless platform

Usage:
  runplane start                      all six services in one process (standalone; embedded storage
                                      and in-process bus unless NATS_URL / DATABASE_URL are set)
  runplane start --service <name>     one service (cluster mode: needs NATS_URL and its DATABASE_URL)
  runplane migrate [--service <name>] apply database migrations and exit
${DOCS_HELP}
${QUEUE_HELP}
${OPERATE_HELP}
${ADMIN_HELP}
${CLIENT_HELP}
  runplane --help

Services: ${Object.keys(ALL_SERVICES).join(', ')}
Configuration: environment variables, see docs/configuration.md.`;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      service: { type: 'string', short: 's' },
      help: { type: 'boolean', short: 'h' },
      url: { type: 'string' },
      key: { type: 'string' },
      name: { type: 'string' },
      scope: { type: 'string' },
      user: { type: 'string' },
      endpoint: { type: 'string' },
      json: { type: 'boolean' },
      template: { type: 'string' },
      'workers-min': { type: 'string' },
      'workers-max': { type: 'string' },
      input: { type: 'string' },
      async: { type: 'boolean' },
      wait: { type: 'string' },
      out: { type: 'string' },
      check: { type: 'boolean' },
      image: { type: 'string' },
      cmd: { type: 'string' },
      env: { type: 'string', multiple: true },
      serverless: { type: 'boolean' },
      value: { type: 'string' },
      description: { type: 'string' },
      worker: { type: 'string' },
      job: { type: 'string' },
      tail: { type: 'string' },
      since: { type: 'string' },
      follow: { type: 'boolean', short: 'f' },
      window: { type: 'string' },
    },
  });
}

/** A usage mistake: one line naming it, then the usage, on stderr; exit status 1. */
function usageError(message: string): number {
  process.stderr.write(`runplane: ${message}\n\n${HELP}\n`);
  return 1;
}

/** parseArgs' complaint (unknown option, missing value) as one plain sentence, else undefined. */
function parseArgsProblem(err: unknown): string | undefined {
  const { code, message } = err as { code?: string; message?: string };
  if (!code?.startsWith('ERR_PARSE_ARGS_') || !message) return undefined;
  const option = /Unknown option '([^']+)'/.exec(message)?.[1];
  return option ? `unknown option "${option}"` : message.split('\n')[0];
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    const problem = parseArgsProblem(err);
    if (problem) return usageError(problem);
    throw err;
  }
  const { positionals, values } = parsed;
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(`${HELP}\n`);
    return values.help ? 0 : 1;
  }
  const services = values.service ? [serviceByName(values.service)] : Object.values(ALL_SERVICES);
  if (command === 'start') return start(services, !values.service);
  if (command === 'migrate') return migrate(services);
  if (command === 'docs') return runDocsCommand(services, values);
  if (command === 'keys' || command === 'users')
    return runAdminCommand(command, positionals.slice(1), values);
  if (command === 'endpoints' || command === 'jobs')
    return runQueueCommand(command, positionals.slice(1), values);
  if (
    command === 'templates' ||
    command === 'pods' ||
    command === 'secrets' ||
    command === 'workers' ||
    command === 'logs'
  )
    return runOperateCommand(command, positionals.slice(1), values);
  return usageError(`unknown command "${command}"`);
}

async function start(services: ServiceDescriptor[], allInOne: boolean): Promise<number> {
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
async function migrate(services: ServiceDescriptor[]): Promise<number> {
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      `runplane: ${err instanceof ConfigError ? err.message : ((err as Error)?.stack ?? err)}\n`,
    );
    process.exit(1);
  },
);
