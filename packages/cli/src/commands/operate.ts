import {
  splitDockerArgs,
  type Pod,
  type RunplaneClient,
  type Template,
  type WorkloadLogLine,
} from '@runplane/contracts';
import { output, runClientCommand, table, UsageError, type ClientFlags } from './common.js';

export interface OperateFlags extends ClientFlags {
  name?: string;
  image?: string;
  cmd?: string;
  env?: string[];
  serverless?: boolean;
  template?: string;
  value?: string;
  description?: string;
  worker?: string;
  job?: string;
  tail?: string;
  since?: string;
  follow?: boolean;
}

export const OPERATE_HELP = `  runplane templates list | get <id> | delete <id>
  runplane templates create --name <n> --image <image> [--cmd '<command>'] [--env K=V ...] [--serverless]
  runplane pods list | get <id> | start <id> | stop <id> | delete <id>
  runplane pods create --name <n> (--image <image> [--cmd '<command>'] [--env K=V ...] | --template <id>)
  runplane secrets list | delete <id>
  runplane secrets create --name <n> [--value <v>] [--description <d>]
                                      the value from --value or stdin; it is never printed
  runplane workers <endpointId>       the endpoint's workers: state, version, jobs, exit code, reason
  runplane logs <podId|endpointId> [--worker <id>] [--job <id>] [--tail n] [--since <time|seconds>] [-f]
                                      a Pod's logs; --worker: a worker of the endpoint; --job: what its
                                      workers wrote while they held the job; -f/--follow: keep printing
                                      new lines until the workload ends (or Ctrl-C). stderr lines read
                                      "[stderr] ..."`;

type Group = 'templates' | 'pods' | 'secrets' | 'workers' | 'logs';

/** `runplane templates|pods|secrets|workers|logs …` through the public API, with the typed client. */
export function runOperateCommand(
  group: Group,
  args: string[],
  flags: OperateFlags,
): Promise<number> {
  return runClientCommand(flags, async (client) => {
    if (group === 'templates') return templates(client, args, flags);
    if (group === 'pods') return pods(client, args, flags);
    if (group === 'secrets') return secrets(client, args, flags);
    if (group === 'workers') return workers(client, args, flags);
    return logs(client, args, flags);
  });
}

function needId(args: string[], what: string): string {
  if (!args[1]) throw new UsageError(`${what} needs the id`);
  return args[1];
}

/** `--env K=V` flags as a map. */
function envOf(flags: OperateFlags): Record<string, string> | undefined {
  if (!flags.env?.length) return undefined;
  const env: Record<string, string> = {};
  for (const item of flags.env) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env must be NAME=value, not "${item}"`);
    env[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return env;
}

const cmdOf = (flags: OperateFlags) =>
  flags.cmd === undefined ? undefined : splitDockerArgs(flags.cmd, '--cmd');

function describeTemplate(t: Template): string {
  return [
    `${t.id} ${t.name}`,
    `  image: ${t.imageName}${t.isServerless ? ' (serverless)' : ''}`,
    ...(t.dockerStartCmd.length ? [`  command: ${JSON.stringify(t.dockerStartCmd)}`] : []),
    ...Object.keys(t.env).map((k) => `  env ${k}=${t.env[k]}`),
  ].join('\n');
}

async function templates(client: RunplaneClient, args: string[], flags: OperateFlags) {
  const action = args[0];
  if (action === 'list') {
    const list = await client.templates.list();
    output(flags, list, () =>
      table(
        list.map((t) => [t.id, t.isServerless ? 'yes' : 'no', t.imageName, t.name]),
        ['ID', 'SERVERLESS', 'IMAGE', 'NAME'],
      ),
    );
    return 0;
  }
  if (action === 'get') {
    const t = await client.templates.get(needId(args, 'templates get'));
    output(flags, t, () => describeTemplate(t));
    return 0;
  }
  if (action === 'create') {
    if (!flags.name || !flags.image)
      throw new UsageError('templates create needs --name and --image');
    const t = await client.templates.create({
      name: flags.name,
      imageName: flags.image,
      dockerStartCmd: cmdOf(flags),
      env: envOf(flags),
      isServerless: flags.serverless,
    });
    output(flags, t, () => `created template ${t.id} (${t.name})`);
    return 0;
  }
  if (action === 'delete') {
    const id = needId(args, 'templates delete');
    await client.templates.delete(id);
    output(flags, { id, deleted: true }, () => `deleted template ${id}`);
    return 0;
  }
  throw new UsageError(`unknown command "templates ${action ?? ''}"`);
}

function describePod(p: Pod): string {
  return [
    `${p.id} ${p.name} ${p.desiredStatus}`,
    `  image: ${p.imageName}${p.templateId ? ` (template ${p.templateId})` : ''}`,
    ...(p.dockerStartCmd.length ? [`  command: ${JSON.stringify(p.dockerStartCmd)}`] : []),
    ...(p.endpointId ? [`  worker of endpoint ${p.endpointId}`] : []),
    `  last started: ${p.lastStartedAt ?? '-'}, status changed: ${p.lastStatusChange}`,
  ].join('\n');
}

async function pods(client: RunplaneClient, args: string[], flags: OperateFlags) {
  const action = args[0];
  if (action === 'list') {
    const list = await client.pods.list();
    output(flags, list, () =>
      table(
        list.map((p) => [p.id, p.desiredStatus, p.imageName, p.endpointId ?? '', p.name]),
        ['ID', 'STATUS', 'IMAGE', 'ENDPOINT', 'NAME'],
      ),
    );
    return 0;
  }
  if (action === 'get') {
    const p = await client.pods.get(needId(args, 'pods get'));
    output(flags, p, () => describePod(p));
    return 0;
  }
  if (action === 'create') {
    if (!flags.name || (!flags.image && !flags.template))
      throw new UsageError('pods create needs --name and --image or --template');
    const p = await client.pods.create({
      name: flags.name,
      imageName: flags.image,
      templateId: flags.template,
      dockerStartCmd: cmdOf(flags),
      env: envOf(flags),
    });
    output(flags, p, () => `created pod ${p.id} (${p.name}) ${p.desiredStatus}`);
    return 0;
  }
  if (action === 'start' || action === 'stop') {
    const id = needId(args, `pods ${action}`);
    const p = await client.pods[action](id);
    output(flags, p, () => `${p.id} ${p.desiredStatus}`);
    return 0;
  }
  if (action === 'delete') {
    const id = needId(args, 'pods delete');
    await client.pods.delete(id);
    output(flags, { id, deleted: true }, () => `deleted pod ${id}`);
    return 0;
  }
  throw new UsageError(`unknown command "pods ${action ?? ''}"`);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('secret value (then Ctrl-D): ');
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}

async function secrets(client: RunplaneClient, args: string[], flags: OperateFlags) {
  const action = args[0];
  if (action === 'list') {
    const list = await client.secrets.list();
    output(flags, list, () =>
      table(
        list.map((s) => [s.id, s.createdAt, s.name, s.description ?? '']),
        ['ID', 'CREATED', 'NAME', 'DESCRIPTION'],
      ),
    );
    return 0;
  }
  if (action === 'create') {
    if (!flags.name) throw new UsageError('secrets create needs --name');
    const value = flags.value ?? (await readStdin());
    if (!value) throw new UsageError('secrets create needs a value: --value <v> or on stdin');
    const s = await client.secrets.create({
      name: flags.name,
      value,
      description: flags.description,
    });
    output(
      flags,
      s,
      () => `created secret ${s.id} (${s.name}); use it as {{ RUNPOD_SECRET_${s.name} }}`,
    );
    return 0;
  }
  if (action === 'delete') {
    const id = needId(args, 'secrets delete');
    await client.secrets.delete(id);
    output(flags, { id, deleted: true }, () => `deleted secret ${id}`);
    return 0;
  }
  throw new UsageError(`unknown command "secrets ${action ?? ''}"`);
}

async function workers(client: RunplaneClient, args: string[], flags: OperateFlags) {
  if (!args[0]) throw new UsageError('workers needs the endpoint id');
  const list = await client.operations(args[0]).workers();
  output(flags, list, () =>
    table(
      list.map((w) => [
        w.id,
        w.state,
        String(w.version),
        w.isStale ? 'yes' : 'no',
        w.jobs.join(',') || '-',
        w.startedAt,
        w.lastSeenAt ?? '-',
        w.exitCode === null ? '-' : String(w.exitCode),
        w.reason ?? '',
      ]),
      ['ID', 'STATE', 'VERSION', 'STALE', 'JOBS', 'STARTED', 'LAST SEEN', 'EXIT', 'REASON'],
    ),
  );
  return 0;
}

const logLine = (l: WorkloadLogLine) => (l.stream === 'stderr' ? `[stderr] ${l.text}` : l.text);

async function logs(client: RunplaneClient, args: string[], flags: OperateFlags) {
  const id = args[0];
  if (!id) throw new UsageError('logs needs a Pod id, or an endpoint id with --worker or --job');
  const tail = flags.tail === undefined ? undefined : Number(flags.tail);
  if (tail !== undefined && !(Number.isInteger(tail) && tail > 0))
    throw new UsageError('--tail must be a positive integer');
  const options = { tail, since: flags.since };
  if (flags.job) {
    if (flags.worker || flags.follow || tail !== undefined || flags.since)
      throw new UsageError('--job takes no --worker, --tail, --since or --follow');
    const lines = await client.operations(id).jobLogs(flags.job);
    output(flags, lines, () => lines.map(logLine).join('\n'));
    return 0;
  }
  if (!flags.follow) {
    const lines = flags.worker
      ? await client.operations(id).workerLogs(flags.worker, options)
      : await client.pods.logs(id, options);
    if (flags.json) output(flags, lines, () => '');
    else for (const l of lines) process.stdout.write(`${logLine(l)}\n`);
    return 0;
  }
  // Followed: each line as it comes (JSON lines with --json) until the workload ended or Ctrl-C.
  const stop = new AbortController();
  const interrupted = () => stop.abort();
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const lines = flags.worker
      ? client.operations(id).followWorkerLogs(flags.worker, options, stop.signal)
      : client.pods.followLogs(id, options, stop.signal);
    for await (const l of lines)
      process.stdout.write(`${flags.json ? JSON.stringify(l) : logLine(l)}\n`);
    return stop.signal.aborted ? 130 : 0;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}
