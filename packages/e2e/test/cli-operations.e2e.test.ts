import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ADMIN_KEY,
  CLI,
  eventually,
  killAll,
  removeTempDir,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `runplane` process with its output collected as it comes. */
interface Running {
  child: ChildProcess;
  out: Ran;
  exited: Promise<Ran>;
}

/**
 * The operating commands of the `runplane` CLI as a user runs them (the built bin, RUNPLANE_URL and
 * RUNPLANE_API_KEY in the environment) against a standalone server with real managed workers
 * (support/probe-worker.mjs): templates, secrets, Pods and their followed logs, an endpoint's
 * workers, job history, worker and job logs, metrics and waiting reasons, and mistakes.
 */
describe('runplane CLI: operating commands (standalone)', () => {
  const workDir = tempDir('cli-operations');
  let url: string;

  const spawnCli = (args: string[], stdin?: string): Running => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, RUNPLANE_URL: url, RUNPLANE_API_KEY: ADMIN_KEY },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Ran = { code: null, stdout: '', stderr: '' };
    child.stdout!.on('data', (d) => (out.stdout += d));
    child.stderr!.on('data', (d) => (out.stderr += d));
    child.stdin!.end(stdin);
    const exited = new Promise<Ran>((resolve) =>
      child.once('close', (code, signal) =>
        resolve({ ...out, code: code ?? (signal ? -1 : null) }),
      ),
    );
    return { child, out, exited };
  };
  const cli = (args: string[], stdin?: string) => spawnCli(args, stdin).exited;
  /** Runs a command that must succeed; its stdout. */
  const ok = async (args: string[], stdin?: string) => {
    const res = await cli(args, stdin);
    if (res.code !== 0)
      throw new Error(`runplane ${args.join(' ')} -> ${res.code}\n${res.stderr}${res.stdout}`);
    return res.stdout;
  };
  const json = async (args: string[], stdin?: string) =>
    JSON.parse(await ok([...args, '--json'], stdin));
  const noStackTrace = (res: Ran) => {
    expect(res.stderr).not.toMatch(/^\s+at /m);
    expect(res.stdout).not.toMatch(/^\s+at /m);
  };

  beforeAll(async () => {
    const server = startRunplane(
      'cli-operations',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('templates create, list, get and delete', async () => {
    const name = `cli-tpl-${randomBytes(3).toString('hex')}`;
    const created = await ok([
      'templates',
      'create',
      '--name',
      name,
      '--image',
      'runplane-e2e/probe:1',
      '--cmd',
      `node -e 'console.log("a b")'`,
      '--env',
      'A=1',
      '--env',
      'B=x=y',
      '--serverless',
    ]);
    const id = /^created template (\S+) \(/.exec(created)?.[1];
    expect(id).toBeDefined();
    const list = await ok(['templates', 'list']);
    expect(list.split('\n')[0]).toMatch(/^ID\s+SERVERLESS\s+IMAGE\s+NAME$/);
    expect(list).toMatch(new RegExp(`^${id}\\s+yes\\s+runplane-e2e/probe:1\\s+${name}$`, 'm'));
    expect(await json(['templates', 'get', id!])).toMatchObject({
      id,
      name,
      isServerless: true,
      dockerStartCmd: ['node', '-e', 'console.log("a b")'],
      env: { A: '1', B: 'x=y' },
    });
    expect(await ok(['templates', 'delete', id!])).toBe(`deleted template ${id}\n`);
    expect(await json(['templates', 'list'])).not.toContainEqual(expect.objectContaining({ id }));
  }, 60_000);

  it('secrets: the value is read from stdin, listed without it, and deleted', async () => {
    const value = `cli-secret-${randomBytes(12).toString('hex')}`;
    const created = await ok(['secrets', 'create', '--name', 'cli_token'], `${value}\n`);
    expect(created).toMatch(/^created secret \S+ \(cli_token\)/);
    expect(created).not.toContain(value);
    const asJson = await ok(['secrets', 'list', '--json']);
    const list = await ok(['secrets', 'list']);
    expect(list).toMatch(/^ID\s+CREATED\s+NAME\s+DESCRIPTION/);
    expect(list).toContain('cli_token');
    expect(asJson + list).not.toContain(value);
    const id = JSON.parse(asJson).find((s: { name: string }) => s.name === 'cli_token').id;
    expect(await ok(['secrets', 'delete', id])).toBe(`deleted secret ${id}\n`);
    expect(await ok(['secrets', 'list'])).not.toContain('cli_token');
    const again = await cli(['secrets', 'delete', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`runplane: 404: secret ${id} not found\n`);
  }, 60_000);

  it('pods create, list, logs -f until the Pod is stopped, stop and delete', async () => {
    const script =
      'console.log("cli pod up"); console.error("cli pod warn"); setInterval(() => {}, 1 << 30)';
    const created = await json([
      'pods',
      'create',
      '--name',
      'cli-pod',
      '--image',
      'runplane-e2e/pod:1',
      '--cmd',
      `${process.execPath} -e '${script}'`,
    ]);
    expect(created).toMatchObject({ name: 'cli-pod', desiredStatus: 'RUNNING' });
    const id = created.id as string;
    expect(await ok(['pods', 'list'])).toMatch(
      new RegExp(`^${id}\\s+RUNNING\\s+runplane-e2e/pod:1\\s+cli-pod$`, 'm'),
    );

    const follow = spawnCli(['logs', id, '-f']);
    await eventually(
      async () =>
        follow.out.stdout.includes('cli pod up\n') &&
        follow.out.stdout.includes('[stderr] cli pod warn\n'),
      'the followed lines',
    );
    expect(await ok(['pods', 'stop', id])).toBe(`${id} EXITED\n`);
    // The stream ends once the workload has ended: the follower exits by itself.
    const ended = await follow.exited;
    expect(ended.code).toBe(0);
    expect(ended.stdout.split('\n').filter((l) => l === 'cli pod up')).toHaveLength(1);
    expect(await json(['pods', 'get', id])).toMatchObject({ id, desiredStatus: 'EXITED' });

    expect(await ok(['pods', 'delete', id])).toBe(`deleted pod ${id}\n`);
    const gone = await cli(['pods', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`runplane: 404: pod ${id} not found\n`);
  }, 90_000);

  it('an endpoint with a probe worker: jobs run, workers, jobs events, logs, metrics', async () => {
    const tpl = await json([
      'templates',
      'create',
      '--name',
      `cli-probe-${randomBytes(3).toString('hex')}`,
      '--image',
      'runplane-e2e/probe:1',
      '--cmd',
      `${process.execPath} ${PROBE_WORKER}`,
      '--serverless',
    ]);
    const ep = (
      await json([
        'endpoints',
        'create',
        '--name',
        'cli-ops',
        '--template',
        tpl.id,
        '--workers-min',
        '1',
        '--workers-max',
        '1',
      ])
    ).id as string;

    const done = await ok(['jobs', 'run', ep, '--input', '{"log": ["cli job says hi"]}']);
    expect(done).toMatch(/^\S+ COMPLETED\n/);
    const jobId = done.split(' ')[0];

    // workers: the one that ran it.
    const workers = await json(['workers', ep]);
    expect(workers).toEqual([
      expect.objectContaining({ state: expect.stringMatching(/^(IDLE|RUNNING)$/), version: 1 }),
    ]);
    const workerId = workers[0].id as string;
    const table = await ok(['workers', ep]);
    expect(table.split('\n')[0]).toMatch(
      /^ID\s+STATE\s+VERSION\s+STALE\s+JOBS\s+STARTED\s+LAST SEEN\s+EXIT\s+REASON$/,
    );
    expect(table).toMatch(new RegExp(`^${workerId}\\s+(IDLE|RUNNING)\\s+1\\s+no\\s`, 'm'));

    // jobs events: SUBMITTED, TAKEN by the worker, COMPLETED.
    const events = await ok(['jobs', 'events', ep, jobId]);
    const rows = events.trim().split('\n');
    expect(rows[0]).toMatch(/^AT\s+TYPE\s+WORKER\s+DETAIL$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/)[1])).toEqual([
      'SUBMITTED',
      'TAKEN',
      'COMPLETED',
    ]);
    expect(rows[2]).toContain(workerId);

    // logs --worker and --job: the line the worker printed.
    await eventually(
      async () =>
        (await ok(['logs', ep, '--worker', workerId])).split('\n').includes('cli job says hi'),
      'the worker line in logs --worker',
    );
    expect((await ok(['logs', ep, '--job', jobId])).split('\n')).toContain('cli job says hi');
    expect(await json(['logs', ep, '--worker', workerId, '--tail', '1'])).toHaveLength(1);

    // logs -f: the line, then the next job's line as it comes; ended with Ctrl-C.
    const follow = spawnCli(['logs', ep, '--worker', workerId, '--follow']);
    await eventually(
      async () => follow.out.stdout.includes('cli job says hi\n'),
      'the followed line',
    );
    const second = (await ok(['jobs', 'run', ep, '--input', '{"log": ["second job line"]}'])).split(
      ' ',
    )[0];
    // The new line shows up in the followed stream while it is open. (On a starved machine the
    // worker may have been replaced as unhealthy: then the job ran elsewhere and the stream ended.)
    const takenBy = (await json(['jobs', 'events', ep, second])).find(
      (e: { type: string }) => e.type === 'TAKEN',
    )?.workerId;
    if (takenBy === workerId)
      await eventually(
        async () => follow.out.stdout.includes('second job line\n'),
        'the new line followed',
      ).catch((err: Error) => {
        throw new Error(`${err.message}; the follower printed ${JSON.stringify(follow.out)}`);
      });
    follow.child.kill('SIGINT');
    const stopped = await follow.exited;
    // Ctrl-C ends it with 130; a stream that ended with its worker (replaced) exits 0.
    expect(takenBy === workerId ? [130] : [0, 130]).toContain(stopped.code);
    noStackTrace(stopped);

    // metrics: the two jobs.
    const metrics = await json(['endpoints', 'metrics', ep, '--window', '15m']);
    expect(metrics).toMatchObject({ window: '15m', jobs: { completed: 2, failed: 0 } });
    const text = await ok(['endpoints', 'metrics', ep]);
    expect(text).toMatch(/^last 1h \(/);
    expect(text).toContain('  jobs: 2 completed, 0 failed, 0 timed out, 0 retried');
    expect(text).toMatch(/^\s+queue wait\s+2\s+\d+ ms/m);
    const bad = await cli(['endpoints', 'metrics', ep, '--window', '3d']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^runplane: 400: window must be .*\n$/);
  }, 150_000);

  it('endpoints get shows why jobs wait, with the last lines of a worker that crashed', async () => {
    const tpl = await json([
      'templates',
      'create',
      '--name',
      `cli-crash-${randomBytes(3).toString('hex')}`,
      '--image',
      'runplane-e2e/probe:1',
      '--cmd',
      `${process.execPath} -e 'console.log("cli: cannot load the model"); process.exit(3)'`,
      '--serverless',
    ]);
    const ep = (await json(['endpoints', 'create', '--template', tpl.id, '--workers-max', '1'])).id;
    await ok(['jobs', 'run', ep, '--input', '{}', '--async']);
    const shown = await eventually(
      async () => {
        const out = await ok(['endpoints', 'get', ep]);
        return out.includes('| cli: cannot load the model') && out;
      },
      'START_BACKOFF with the worker output',
      90_000,
    );
    expect(shown).toContain('waiting: 1 job(s) in queue');
    expect(shown).toMatch(/^ {4}START_BACKOFF: .+$/m);
    expect(shown).toMatch(/^ {6}last lines of worker \S+:$/m);
    expect(await ok(['workers', ep])).toMatch(/\sEXITED\s.*\s3\s+crashed: exit code 3$/m);
  }, 120_000);

  it('a bad flag, a missing argument and an unknown id: one line, exit 1, no stack trace', async () => {
    const flag = await cli(['pods', 'list', '--bogus']);
    expect(flag.code).toBe(1);
    expect(flag.stderr.split('\n')[0]).toBe('runplane: unknown option "--bogus"');
    expect(flag.stderr).toContain('runplane logs <podId|endpointId>');
    noStackTrace(flag);
    const missing = await cli(['templates', 'create', '--name', 'x']);
    expect(missing).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'runplane: templates create needs --name and --image\n',
    });
    const unknown = await cli(['workers', 'no-such-endpoint']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^runplane: 404: .*\n$/);
    noStackTrace(unknown);
  }, 60_000);
});
