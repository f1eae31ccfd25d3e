import {
  isFinalStatus,
  type JobRecord,
  type JobRequestDto,
  type RunplaneClient,
} from '@runplane/contracts';
import yoctoSpinner from 'yocto-spinner';
import {
  clientFrom,
  output,
  runClientCommand,
  table,
  UsageError,
  type ClientFlags,
} from './common.js';

export interface QueueFlags extends ClientFlags {
  name?: string;
  template?: string;
  'workers-min'?: string;
  'workers-max'?: string;
  input?: string;
  async?: boolean;
  wait?: string;
}

export const QUEUE_HELP = `  runplane endpoints create --name <n> --template <templateId> [--workers-min n] [--workers-max n]
  runplane endpoints list
  runplane jobs run <endpointId> --input '<json>' [--async] [--wait <ms>]
                                      submit a job and wait for its result (a spinner shows its
                                      status); --async prints the job id at once
  runplane jobs status <endpointId> <jobId>
  runplane jobs stream <endpointId> <jobId>
                                      print the job's stream chunks as they come (one JSON per line)
  runplane jobs cancel <endpointId> <jobId>`;

/** `runplane endpoints …` / `runplane jobs …` through the public API, with the typed client users import. */
export function runQueueCommand(
  group: 'endpoints' | 'jobs',
  args: string[],
  flags: QueueFlags,
): Promise<number> {
  let baseUrl = '';
  return runClientCommand(
    () => baseUrl,
    async () => {
      const connected = clientFrom(flags);
      baseUrl = connected.baseUrl;
      const [action, ...rest] = args;
      if (group === 'endpoints') return endpoints(connected.client, action, flags);
      return jobs(connected.client, action, rest, flags);
    },
  );
}

async function endpoints(
  client: RunplaneClient,
  action: string | undefined,
  flags: QueueFlags,
): Promise<number> {
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
    const record = await awaitFinal(
      () => queue.statusSync(accepted.id, { waitMs: integer(flags.wait, '--wait') ?? 90_000 }),
      accepted.id,
      flags,
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
  flags: QueueFlags,
): Promise<JobRecord> {
  const spinner =
    process.stderr.isTTY && !flags.json
      ? yoctoSpinner({ text: `job ${jobId} IN_QUEUE` }).start()
      : undefined;
  try {
    for (;;) {
      const record = await poll();
      if (spinner) spinner.text = `job ${jobId} ${record.status}`;
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
