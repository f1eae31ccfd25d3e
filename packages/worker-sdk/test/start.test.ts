import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { start, type Handler, type Logger } from '../src/index.js';
import { FakeRunplane } from './fake-runplane.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

describe('start(): local test mode (no RUNPOD_WEBHOOK_GET_JOB, or --test_input)', () => {
  let stdout: string[];
  let spy: ReturnType<typeof jest.spyOn>;
  beforeEach(() => {
    stdout = [];
    spy = jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => {
      stdout.push(String(chunk));
      return true;
    }) as never);
  });
  afterEach(() => spy.mockRestore());

  const handler: Handler = async (job) => {
    if (job.input.fail) return { error: 'it failed' };
    return { echo: job.input.echo, id: job.id };
  };
  const run = (options: {
    argv?: string[];
    cwd?: string;
    env?: Record<string, string>;
    handler?: Handler;
  }) => start({ handler, env: {}, argv: [], logger: silent, exit: false, ...options });

  it('runs the --test_input job once and prints its result', async () => {
    expect(await run({ argv: ['--test_input', '{"input": {"echo": 5}}'] })).toBe(0);
    expect(stdout.join('')).toBe('{"output":{"echo":5,"id":"local_test"}}\n');
    expect(await run({ argv: ['--test_input={"id": "mine", "input": {"echo": 1}}'] })).toBe(0);
    expect(JSON.parse(stdout[1])).toEqual({ output: { echo: 1, id: 'mine' } });
  });

  it('uses --test_input even when RUNPOD_WEBHOOK_GET_JOB is set', async () => {
    expect(
      await run({
        argv: ['--test_input', '{"input": {"echo": "x"}}'],
        env: { RUNPOD_WEBHOOK_GET_JOB: 'http://127.0.0.1:1/v2/e/job-take/w?' },
      }),
    ).toBe(0);
    expect(JSON.parse(stdout[0]).output.echo).toBe('x');
  });

  it('reads test_input.json from the working directory', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'worker-sdk-'));
    expect(await run({ cwd: dir })).toBe(1); // no file: nothing to do
    writeFileSync(
      path.join(dir, 'test_input.json'),
      JSON.stringify({ input: { echo: 'from file' } }),
    );
    expect(await run({ cwd: dir })).toBe(0);
    expect(JSON.parse(stdout[0])).toEqual({ output: { echo: 'from file', id: 'local_test' } });
  });

  it('exits 1 without input, on invalid JSON and when the job fails', async () => {
    expect(await run({ argv: ['--test_input', '{"id": "x"}'] })).toBe(1);
    expect(await run({ argv: ['--test_input', '{nope'] })).toBe(1);
    expect(await run({ argv: ['--test_input', '{"input": {"fail": true}}'] })).toBe(1);
    expect(
      await run({
        argv: ['--test_input', '{"input": {}}'],
        handler: () => {
          throw new Error('x');
        },
      }),
    ).toBe(1);
    expect(stdout).toEqual([]);
  });

  it('aggregates a streaming handler into one output list', async () => {
    expect(
      await run({
        argv: ['--test_input', '{"input": {"n": 3}}'],
        handler: async function* (job) {
          for (let i = 0; i < job.input.n; i++) yield i;
        },
      }),
    ).toBe(0);
    expect(JSON.parse(stdout[0])).toEqual({ output: [0, 1, 2] });
  });
});

describe('start(): a deployed worker', () => {
  let fake: FakeRunplane;
  beforeEach(async () => {
    fake = await new FakeRunplane().start();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('on SIGTERM takes no more jobs, finishes the one in progress, posts it, then ends with 0', async () => {
    let release!: () => void;
    let markStarted!: () => void;
    const started = new Promise<void>((r) => (markStarted = r));
    const handler: Handler = async () => {
      markStarted();
      await new Promise<void>((r) => (release = r));
      return 'finished after SIGTERM';
    };
    const before = process.listenerCount('SIGTERM');
    const running = start({ handler, env: fake.env(), argv: [], logger: silent, exit: false });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    fake.push({ id: 'sig-1', input: {} });
    await started;
    process.emit('SIGTERM', 'SIGTERM');
    const takes = fake.of('job-take').length;
    release();
    expect(await running).toBe(0);
    expect(fake.finals('sig-1')[0].body).toEqual({ output: 'finished after SIGTERM' });
    expect(fake.of('job-take')).toHaveLength(takes); // nothing taken after SIGTERM
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
