import {
  isFinalStatus,
  type Endpoint,
  type EndpointMetrics,
  type JobRecord,
  type JobRequestDto,
  type RunplaneClient,
} from '@runplane/contracts';
import yoctoSpinner from 'yocto-spinner';
import { output, runClientCommand, table, UsageError, type ClientFlags } from './common.js';

export interface QueueFlags extends ClientFlags {
  name?: string;
  template?: string;
  'workers-min'?: string;
  'workers-max'?: string;
  input?: string;
  async?: boolean;
  wait?: string;
  window?: string;
}

export const QUEUE_HELP = `  runplane endpoints create --name <n> --template <templateId> [--workers-min n] [--workers-max n]
  runplane endpoints list
  runplane endpoints get <id>         its settings, and why its queued jobs wait (with the last log
                                      lines of a worker that failed to start)
  runplane endpoints metrics <id> [--window 1h]
                                      jobs by final state, queue wait, execution and cold start times
  runplane jobs run <endpointId> --input '<json>' [--async] [--wait <ms>]
                                      submit a job and wait for its result (a spinner shows its
                                      state and the worker's progress); --async prints the job id
  runplane jobs status <endpointId> <jobId>
  runplane jobs stream <endpointId> <jobId>
                                      print the job's stream chunks as they come (one JSON per line)
  runplane jobs cancel <endpointId> <jobId>
  runplane jobs events <endpointId> <jobId>
                                      the job's history: submitted, taken by which worker, requeued…`;

/** `runplane endpoints …` / `runplane jobs …` through the public API, with the typed client users import. */
export function runQueueCommand(
  group: 'endpoints' | 'jobs',
  args: string[],
  flags: QueueFlags,
): Promise<number> {
  return runClientCommand(flags, async (client) => {
    const [action, ...rest] = args;
    if (group === 'endpoints') return endpoints(client, action, rest, flags);
    return jobs(client, action, rest, flags);
  });
}

async function endpoints(
  client: RunplaneClient,
  action: string | undefined,
  args: string[],
  flags: QueueFlags,
): Promise<number> {
  if (action === 'get' || action === 'metrics') {
    if (!args[0]) throw new UsageError(`endpoints ${action} needs the endpoint id`);
    if (action === 'get') {
      const endpoint = await client.endpoints.get(args[0]);
      output(flags, endpoint, () => describeEndpoint(endpoint));
    } else {
      const metrics = await client.operations(args[0]).metrics({ window: flags.window });
      output(flags, metrics, () => describeMetrics(metrics));
    }
    return 0;
  }
  if (action === 'create') {
    if (!flags.template) throw new UsageError('endpoints create needs --template <templateId>');
    const endpoint = await client.endpoints.create({
      name: flags.name,
      templateId: flags.template,
      workersMin: integer(flags['workers-min'], '--workers-min'),
      workersMax: integer(flags['workers-max'], '--workers-max'),
    });
    output(
      flags,
      endpoint,
      () =>
        `created endpoint ${endpoint.id} (${endpoint.name || 'unnamed'}) on template ${endpoint.templateId}, workers ${endpoint.workersMin}..${endpoint.workersMax}`,
    );
    return 0;
  }
  if (action === 'list') {
    const list = await client.endpoints.list();
    output(flags, list, () =>
      table(
        list.map((e) => [
          e.id,
          e.templateId,
          `${e.workersMin}..${e.workersMax}`,
          String(e.version),
          e.name,
        ]),
        ['ID', 'TEMPLATE', 'WORKERS', 'VERSION', 'NAME'],
      ),
    );
    return 0;
  }
  throw new UsageError(`unknown command "endpoints ${action ?? ''}"`);
}

async function jobs(
  client: RunplaneClient,
  action: string | undefined,
  args: string[],
  flags: QueueFlags,
): Promise<number> {
  const [endpointId, jobId] = args;
  if (!endpointId) throw new UsageError(`jobs ${action ?? ''} needs the endpoint id`);
  const queue = client.queue(endpointId);
  if (action === 'run') {
    const request = { input: parseInput(flags.input) } as JobRequestDto;
    const accepted = await queue.run(request);
    if (flags.async) {
      output(flags, accepted, () => accepted.id);
      return 0;
    }
    const waitMs = integer(flags.wait, '--wait') ?? 90_000;
    const live = process.stderr.isTTY && !flags.json;
    // On a terminal, short polls keep the spinner's state and progress current.
    const record = await awaitFinal(
      () => queue.statusSync(accepted.id, { waitMs: live ? Math.min(waitMs, 1_000) : waitMs }),
      accepted.id,
      live,
    );
    output(flags, record, () => describe(record));
    return record.status === 'COMPLETED' ? 0 : 2;
  }
  if (!jobId) throw new UsageError(`jobs ${action ?? ''} needs the endpoint id and the job id`);
  if (action === 'status') {
    const record = await queue.status(jobId);
    output(flags, record, () => describe(record));
    return 0;
  }
  if (action === 'stream') {
    const chunks = queue.stream(jobId);
    for (;;) {
      const next = await chunks.next();
      if (next.done) {
        if (!flags.json) process.stderr.write(`job ${jobId} ${next.value}\n`);
        return next.value === 'COMPLETED' ? 0 : 2;
      }
      // One line per chunk, as soon as it arrives (also with --json: JSON lines).
      process.stdout.write(`${JSON.stringify(next.value)}\n`);
    }
  }
  if (action === 'events') {
    const events = await client.operations(endpointId).jobEvents(jobId);
    output(flags, events, () =>
      table(
        events.map((e) => [e.at, e.type, e.workerId ?? '-', e.detail ?? '']),
        ['AT', 'TYPE', 'WORKER', 'DETAIL'],
      ),
    );
    return 0;
  }
  if (action === 'cancel') {
    const cancelled = await queue.cancel(jobId);
    output(flags, cancelled, () => `${cancelled.id} ${cancelled.status}`);
    return 0;
  }
  throw new UsageError(`unknown command "jobs ${action ?? ''}"`);
}

/** Polls status-sync until the job is final, with a spinner showing its status on a terminal. */
async function awaitFinal(
  poll: () => Promise<JobRecord>,
  jobId: string,
  live: boolean,
): Promise<JobRecord> {
  const spinner = live ? yoctoSpinner({ text: `job ${jobId} IN_QUEUE` }).start() : undefined;
  try {
    for (;;) {
      const record = await poll();
      if (spinner) spinner.text = spinnerText(jobId, record, process.stderr.columns);
      if (isFinalStatus(record.status)) {
        if (record.status === 'COMPLETED') spinner?.success(`job ${jobId} COMPLETED`);
        else spinner?.error(`job ${jobId} ${record.status}`);
        return record;
      }
    }
  } finally {
    if (spinner?.isSpinning) spinner.stop();
  }
}

/** The spinner's line: the job's state, and while IN_PROGRESS its latest progress output, on one line. */
export function spinnerText(jobId: string, record: JobRecord, columns = 80): string {
  const text = `job ${jobId} ${record.status}`;
  if (record.status !== 'IN_PROGRESS' || record.output === undefined || record.output === null)
    return text;
  const progress = (
    typeof record.output === 'string' ? record.output : JSON.stringify(record.output)
  ).replace(/\s+/g, ' ');
  const line = `${text}: ${progress}`;
  const room = Math.max(columns - 3, text.length + 5); // the spinner's frame and a space
  return line.length > room ? `${line.slice(0, room - 1)}…` : line;
}

function describeEndpoint(e: Endpoint): string {
  const lines = [
    `${e.id} ${e.name || 'unnamed'}`,
    `  template ${e.templateId}, version ${e.version}, workers ${e.workersMin}..${e.workersMax}, idle timeout ${e.idleTimeout} s`,
  ];
  if (e.waiting) {
    lines.push(`  waiting: ${e.waiting.jobs} job(s) in queue`);
    for (const r of e.waiting.reasons) {
      lines.push(`    ${r.code}: ${r.message}`);
      if (r.logs?.length) {
        lines.push(`      last lines of worker ${r.workerId ?? '?'}:`);
        for (const l of r.logs) lines.push(`      | ${l}`);
      }
    }
  }
  return lines.join('\n');
}

function describeMetrics(m: EndpointMetrics): string {
  const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);
  const row = (name: string, d: EndpointMetrics['delayTime']) => [
    `  ${name}`,
    String(d.samples),
    ms(d.p70),
    ms(d.p90),
    ms(d.p98),
  ];
  return [
    `last ${m.window} (${m.from} .. ${m.to})`,
    `  jobs: ${m.jobs.completed} completed, ${m.jobs.failed} failed, ${m.jobs.timedOut} timed out, ${m.jobs.retried} retried`,
    table(
      [
        row('queue wait', m.delayTime),
        row('execution', m.executionTime),
        row('cold start', m.coldStart),
      ],
      ['', 'SAMPLES', 'P70', 'P90', 'P98'],
    ),
  ].join('\n');
}

function describe(record: JobRecord): string {
  const lines = [`${record.id} ${record.status}`];
  if (record.delayTime !== undefined)
    lines.push(`  delay ${record.delayTime} ms, execution ${record.executionTime ?? 0} ms`);
  if (record.error) lines.push(`  error: ${record.error}`);
  if (record.output !== undefined) lines.push(`  output: ${JSON.stringify(record.output)}`);
  return lines.join('\n');
}

function parseInput(text: string | undefined): unknown {
  if (text === undefined) throw new UsageError("jobs run needs --input '<json object>'");
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError('--input must be JSON, e.g. --input \'{"prompt": "hello"}\'');
  }
}

function integer(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n)) throw new UsageError(`${flag} must be an integer`);
  return n;
}
