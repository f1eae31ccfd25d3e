import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@runplane/platform';
import {
  WorkloadStartError,
  type WorkloadSpec,
  type WorkloadStatus,
} from '../src/compute/compute-provider.js';
import { LocalComputeProvider } from '../src/compute/local-compute-provider.js';
import { LogRingBuffer } from '../src/compute/log-ring-buffer.js';
import { isAlive, waitFor, writeFixture } from './worker-fixture.js';

describe('LocalComputeProvider', () => {
  let fixture: string;
  let provider: LocalComputeProvider;
  let n = 0;
  const spec = (
    env: Record<string, string> = {},
    extra: Partial<WorkloadSpec> = {},
  ): WorkloadSpec => ({
    id: `w${++n}`,
    image: 'example/worker:1',
    entrypoint: [process.execPath],
    command: [fixture],
    env,
    ...extra,
  });
  const stdoutJson = async (ref: string, from: LocalComputeProvider = provider) => {
    const line = await waitFor(
      async () =>
        (await from.logs(ref)).find((l) => l.stream === 'stdout' && l.text.startsWith('{')),
      'the env line',
    );
    return JSON.parse(line.text) as { env: Record<string, string>; uid?: number };
  };

  beforeAll(() => {
    fixture = writeFixture();
    process.env.RUNPLANE_TEST_SERVER_SECRET = 'must-not-leak';
  });
  afterEach(async () => {
    await provider?.onApplicationShutdown();
  });
  afterAll(() => {
    delete process.env.RUNPLANE_TEST_SERVER_SECRET;
  });
  const newProvider = (options = {}) =>
    (provider = new LocalComputeProvider(createLogger({ level: 'silent' }), options));

  it('runs entrypoint + command with PATH/HOME and the workload spec env only, and keeps stdout/stderr as logs', async () => {
    newProvider();
    const handle = await provider.start(
      spec(
        { RUNPOD_POD_ID: 'w-env', TEMPLATE_VAR: 'a b', SHARED: 'plain' },
        {
          secretEnv: { API_TOKEN: 's3cret', SHARED: 'secret wins' },
          ports: ['8888/http', '22/tcp'],
        },
      ),
    );
    // Placement: this host, its address, each port on itself (a process binds host ports directly).
    expect(handle).toEqual({
      ref: expect.any(String),
      pid: expect.any(Number),
      startedAt: expect.any(Date),
      machineId: provider.host.id,
      publicIp: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/),
      portMappings: { 8888: 8888, 22: 22 },
    });
    expect(provider.defaultMachineId()).toBe(provider.host.id);
    const { env } = await stdoutJson(handle.ref);
    expect(env.RUNPOD_POD_ID).toBe('w-env');
    expect(env.TEMPLATE_VAR).toBe('a b');
    expect(env.API_TOKEN).toBe('s3cret');
    expect(env.SHARED).toBe('secret wins');
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.RUNPLANE_TEST_SERVER_SECRET).toBeUndefined();
    const logs = await waitFor(async () => {
      const lines = await provider.logs(handle.ref);
      return lines.some((l) => l.stream === 'stderr') && lines;
    }, 'the stderr line');
    expect(logs.find((l) => l.stream === 'stderr')).toMatchObject({
      text: 'fixture on stderr',
      at: expect.any(Date),
    });
    expect(await provider.logs(handle.ref, { tail: 1 })).toHaveLength(1);
    expect(await provider.status(handle.ref)).toMatchObject({
      state: 'running',
      exitCode: null,
      pid: handle.pid,
    });
  });

  it('records the exit code and time of a process that ends by itself and tells the exit listeners', async () => {
    newProvider();
    const exits: WorkloadStatus[] = [];
    provider.onExit((s) => exits.push(s));
    const handle = await provider.start(spec({ FIXTURE_MODE: 'exit', FIXTURE_EXIT_CODE: '3' }));
    const status = await waitFor(() => exits[0], 'the exit');
    expect(status).toMatchObject({
      ref: handle.ref,
      state: 'exited',
      exitCode: 3,
      signal: null,
      stopRequested: false,
      exitedAt: expect.any(Date),
    });
    expect(await provider.status(handle.ref)).toMatchObject({ state: 'exited', exitCode: 3 });
    // Logs outlive the process.
    expect((await provider.logs(handle.ref)).some((l) => l.text === 'fixture on stderr')).toBe(
      true,
    );
  });

  it('stops with SIGTERM when the process honours it', async () => {
    newProvider();
    const handle = await provider.start(spec());
    await stdoutJson(handle.ref); // its SIGTERM handler is installed by now
    const status = await provider.stop(handle.ref, { graceMs: 5000 });
    expect(status).toMatchObject({
      state: 'exited',
      exitCode: 0,
      signal: null,
      stopRequested: true,
    });
    expect(isAlive(handle.pid!)).toBe(false);
    expect((await provider.logs(handle.ref)).map((l) => l.text)).toContain('got SIGTERM');
  });

  it('kills with SIGKILL after the grace period, and reaches the processes it spawned', async () => {
    newProvider();
    const handle = await provider.start(spec({ FIXTURE_MODE: 'spawn' }));
    const line = await waitFor(
      async () => (await provider.logs(handle.ref)).find((l) => l.text.startsWith('grandchild ')),
      'the grandchild pid',
    );
    const grandchild = Number(line.text.split(' ')[1]);
    expect(isAlive(grandchild)).toBe(true);
    const stubborn = await provider.start(spec({ FIXTURE_MODE: 'ignore-term' }));
    await stdoutJson(stubborn.ref);

    const [a, b] = await Promise.all([
      provider.stop(handle.ref, { graceMs: 5000 }),
      provider.stop(stubborn.ref, { graceMs: 200 }),
    ]);
    expect(a).toMatchObject({ exitCode: 0 });
    expect(b).toMatchObject({
      state: 'exited',
      signal: 'SIGKILL',
      exitCode: 137,
      stopRequested: true,
    });
    expect((await provider.logs(stubborn.ref)).map((l) => l.text)).toContain('ignoring SIGTERM');
    await waitFor(() => !isAlive(grandchild), 'the grandchild to die');
    expect(await provider.stop(stubborn.ref)).toMatchObject({ state: 'exited' }); // no-op once exited
    expect(await provider.stop('unknown')).toBeNull();
  });

  it('fails clearly when there is nothing to run or the command does not exist', async () => {
    newProvider();
    await expect(provider.start(spec({}, { entrypoint: [], command: [] }))).rejects.toThrow(
      /does not pull images; set dockerStartCmd/,
    );
    await expect(
      provider.start(spec({}, { entrypoint: [], command: ['/nonexistent/runplane-worker'] })),
    ).rejects.toThrow(
      new WorkloadStartError(`cannot start w${n}: command not found: /nonexistent/runplane-worker`),
    );
    expect(await provider.status(`w${n}`)).toBeNull();
    await expect(
      provider.start(spec({}, { entrypoint: [], command: ['node /srv/worker.mjs'] })),
    ).rejects.toThrow(/one element per word/);
  });

  it('a start that fails on a value never quotes it: a resolved secret with a NUL stays out of the error', async () => {
    newProvider();
    const secret = `tenant-secret-${n}`;
    const err = await provider
      .start(spec({}, { secretEnv: { TOKEN: `${secret}\u0000tail` } }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkloadStartError);
    expect((err as Error).message).toMatch(/not valid for a process/);
    expect((err as Error).message).not.toContain(secret);
  });

  const runsAsRoot = process.getuid?.() === 0;
  (runsAsRoot ? it : it.skip)(
    'with separate users, each workload runs as its own uid in its own private home',
    async () => {
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-local-users-'));
      newProvider({ separateUsers: { firstUid: 200500, uidCount: 2, workDir } });
      const started = [spec(), spec(), spec()];
      await provider.start(started[0]);
      await provider.start(started[1]);
      await expect(provider.start(started[2])).rejects.toThrow(/workload users are in use/);
      const [a, b] = await Promise.all([stdoutJson(started[0].id), stdoutJson(started[1].id)]);
      const uids = [a, b].map((o) => (o as { uid?: number }).uid);
      expect(new Set(uids)).toEqual(new Set([200500, 200501]));
      expect(a.env.HOME).toMatch(new RegExp(`^${workDir}/`));
      expect(fs.statSync(a.env.HOME).mode & 0o777).toBe(0o700);
      expect(a.env.RUNPLANE_TEST_SERVER_SECRET).toBeUndefined();
      await provider.stop(started[0].id, { graceMs: 5000 });
      // Its uid is free again once it ended.
      await provider.start(started[2]);
      fs.rmSync(workDir, { recursive: true, force: true });
    },
  );

  (runsAsRoot ? it : it.skip)(
    'two servers on one host never share a workload uid: the one of a workload that ends is not killed in the other',
    async () => {
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-local-users-'));
      const users = { firstUid: 200600, uidCount: 2, workDir };
      const other = new LocalComputeProvider(createLogger({ level: 'silent' }), {
        separateUsers: users,
      });
      try {
        newProvider({ separateUsers: users });
        const mine = spec();
        const theirs = spec();
        await provider.start(mine);
        await other.start(theirs);
        const [a, b] = await Promise.all([stdoutJson(mine.id), stdoutJson(theirs.id, other)]);
        expect(a.uid).not.toBe(b.uid);
        await provider.stop(mine.id, { graceMs: 5000 });
        expect((await other.status(theirs.id))?.state).toBe('running');
      } finally {
        await other.onApplicationShutdown();
        fs.rmSync(workDir, { recursive: true, force: true });
      }
    },
  );

  it('refuses to start a second workload with the id of a running one', async () => {
    newProvider();
    const s = spec();
    await provider.start(s);
    await expect(provider.start(s)).rejects.toThrow(/already running/);
  });

  it('stops every process on shutdown: SIGTERM first, SIGKILL for the stubborn ones', async () => {
    newProvider({ defaultGraceMs: 300 });
    const handles = await Promise.all([
      provider.start(spec()),
      provider.start(spec({ FIXTURE_MODE: 'ignore-term' })),
    ]);
    await Promise.all(handles.map((h) => stdoutJson(h.ref)));
    await provider.beforeApplicationShutdown();
    for (const h of handles) expect(isAlive(h.pid!)).toBe(false);
    expect((await provider.status(handles[0].ref))?.exitCode).toBe(0);
    expect((await provider.status(handles[1].ref))?.signal).toBe('SIGKILL');
  });
});

describe('LogRingBuffer', () => {
  it('splits lines per stream, joins partial chunks and UTF-8 characters split across chunks', () => {
    const buf = new LogRingBuffer();
    const euro = Buffer.from('€\n');
    buf.write('stdout', Buffer.from('hel'));
    buf.write('stderr', Buffer.from('err line\r\n'));
    buf.write('stdout', Buffer.concat([Buffer.from('lo '), euro.subarray(0, 1)]));
    buf.write('stdout', euro.subarray(1));
    buf.write('stdout', Buffer.from('tail without newline'));
    expect(buf.read().map((l) => [l.stream, l.text])).toEqual([
      ['stderr', 'err line'],
      ['stdout', 'hello €'],
    ]);
    buf.flush();
    expect(buf.read(1).map((l) => l.text)).toEqual(['tail without newline']);
  });

  it('keeps at most maxLines lines and maxChars characters, dropping the oldest', () => {
    const buf = new LogRingBuffer({ maxLines: 3, maxChars: 1000 });
    for (let i = 0; i < 5000; i++) buf.write('stdout', `line ${i}\n`);
    expect(buf.read().map((l) => l.text)).toEqual(['line 4997', 'line 4998', 'line 4999']);
    const small = new LogRingBuffer({ maxLines: 100, maxChars: 10, maxLineChars: 4 });
    small.write('stdout', 'abcdefghij\nxyz\n');
    expect(small.read().map((l) => l.text)).toEqual(['efgh', 'ij', 'xyz']);
  });
});
