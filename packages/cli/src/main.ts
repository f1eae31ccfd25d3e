import { parseArgs } from 'node:util';
import { SERVICE_NAMES } from '@runplane/contracts';
import { ADMIN_HELP, runAdminCommand } from './commands/admin.js';
import { CLIENT_HELP } from './commands/common.js';
import { DOCS_HELP, runDocsCommand } from './commands/docs.js';
import { OPERATE_HELP, runOperateCommand } from './commands/operate.js';
import { QUEUE_HELP, runQueueCommand } from './commands/queue.js';

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

Services: ${SERVICE_NAMES.join(', ')}
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
  if (command === 'start' || command === 'migrate' || command === 'docs') {
    // The services (and so the whole server) load only for the commands that need them: a client
    // command starts in a fraction of the time.
    const [{ ALL_SERVICES, serviceByName }, { migrate, start }] = await Promise.all([
      import('./services.js'),
      import('./commands/server.js'),
    ]);
    const services = values.service ? [serviceByName(values.service)] : Object.values(ALL_SERVICES);
    if (command === 'start') return start(services, !values.service);
    if (command === 'migrate') return migrate(services);
    return runDocsCommand(services, values);
  }
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      // A ConfigError (by name: @runplane/platform is not loaded for every command) lists the
      // settings to fix; anything else is a bug worth its stack.
      `runplane: ${(err as Error)?.name === 'ConfigError' ? (err as Error).message : ((err as Error)?.stack ?? err)}\n`,
    );
    process.exit(1);
  },
);
