import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PodRpc,
  PodSignals,
  RunplaneError,
  TemplateRpc,
  VaultRpc,
  type Template,
  type WorkerExitedSignal,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { ComputeProvider } from '../src/compute/compute-provider.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { podRestService } from '../src/index.js';
import { PodsRepository } from '../src/pods/pods.repository.js';
import { isAlive, waitFor, writeFixture } from './worker-fixture.js';

// The bootstrap admin's user: the vault keeps secrets for existing users only.
const OWNER = 'usr_admin';
const SECRET_VALUE = 'tok-3f9a$&-value';

function template(id: string, fields: Partial<Template> = {}): Template {
  return {
    id,
    name: `tpl-${id}`,
    imageName: 'example/worker:1',
    category: 'CPU',
    containerDiskInGb: 5,
    dockerEntrypoint: [],
    dockerStartCmd: [],
    earned: 0,
    env: {},
    isPublic: false,
    isRunpod: false,
    isServerless: true,
    ports: [],
    readme: '',
    runtimeInMin: 0,
    volumeInGb: 0,
    volumeMountPath: '/workspace',
    ...fields,
  };
}

const workerEnv = (workerId: string, endpointId = 'ep-1') => ({
  RUNPOD_POD_ID: workerId,
  RUNPOD_ENDPOINT_ID: endpointId,
  RUNPOD_AI_API_KEY: `worker-key-of-${workerId}`,
  RUNPOD_WEBHOOK_GET_JOB: `http://127.0.0.1:1/v2/${endpointId}/job-take/${workerId}?gpu=cpu`,
  RUNPOD_PING_INTERVAL: '10000',
});

describe('serverless workers through the bus (pod-rest with the local compute provider)', () => {
  let server: TestServer;
  let compute: ComputeProvider;
  let pods: PodsRepository;
  const templates = new Map<string, Template>();
  let n = 0;

  const start = (
    templateId: string,
    extra: {
      workerId?: string;
      env?: Record<string, string>;
      endpointEnv?: Record<string, string>;
      ownerId?: string;
    } = {},
  ) => {
    const workerId = extra.workerId ?? `wk-${++n}`;
    return server.bus
      .request(PodRpc.startWorker, {
        ownerId: extra.ownerId ?? OWNER,
        workerId,
        endpointId: 'ep-1',
        templateId,
        slsVersion: 2,
        env: extra.env ?? workerEnv(workerId),
        ...(extra.endpointEnv ? { endpointEnv: extra.endpointEnv } : {}),
        gpuTypeId: 'cpu',
      })
      .then((answer) => {
        // No GPUs on this host: a worker always starts.
        if (!('podId' in answer)) throw new Error(`no pod: ${JSON.stringify(answer)}`);
        return answer;
      });
  };
  const childEnv = async (podId: string) => {
    const line = await waitFor(
      async () =>
        (await compute.logs(podId)).find((l) => l.stream === 'stdout' && l.text.startsWith('{')),
      'the worker env line',
    );
    return (JSON.parse(line.text) as { env: Record<string, string> }).env;
  };
  const pidOf = async (podId: string) => (await compute.status(podId))!.pid!;

  beforeAll(async () => {
    const fixture = writeFixture();
    templates.set(
      'tpl-node',
      template('tpl-node', {
        dockerEntrypoint: [process.execPath],
        dockerStartCmd: [fixture],
        env: {
          MODEL: 'tiny',
          API_TOKEN: '{{ RUNPOD_SECRET_token }}',
          RUNPOD_POD_ID: 'overridden-by-the-scheduler',
        },
        ports: ['8000/http'],
      }),
    );
    templates.set('tpl-image-only', template('tpl-image-only'));
    templates.set(
      'tpl-missing-binary',
      template('tpl-missing-binary', { dockerStartCmd: ['/nonexistent/bin/worker'] }),
    );
    templates.set(
      'tpl-exits',
      template('tpl-exits', {
        dockerStartCmd: [process.execPath, fixture],
        env: { FIXTURE_MODE: 'exit', FIXTURE_EXIT_CODE: '7' },
      }),
    );
    templates.set(
      'tpl-unknown-secret',
      template('tpl-unknown-secret', {
        dockerStartCmd: [process.execPath, fixture],
        env: { KEY: '{{ RUNPOD_SECRET_missing_one }}' },
      }),
    );
    process.env.RUNPLANE_TEST_SERVER_SECRET = 'must-not-leak';
    server = await startTestServer([secretsVaultService, podRestService]);
    // Stand-in for template-graphql, which owns templates (TemplateRpc.get: owner's or public).
    await server.bus.serve(TemplateRpc.get, async ({ ownerId, templateId }) => {
      const t = templates.get(templateId);
      if (!t || ownerId !== OWNER)
        throw RunplaneError.notFound(`template ${templateId} not found`, 'TEMPLATE_NOT_FOUND');
      return t;
    });
    compute = server.app.get(ComputeProvider, { strict: false });
    pods = server.app.get(PodsRepository, { strict: false });
    await server.bus.request(VaultRpc.createSecret, {
      ownerId: OWNER,
      secret: { name: 'token', value: SECRET_VALUE },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    delete process.env.RUNPLANE_TEST_SERVER_SECRET;
  });

  it('starts a worker: the process gets template env (secrets resolved) + RUNPOD_* env, the Pod row gets the template env as written', async () => {
    const { podId } = await start('tpl-node', { workerId: 'wk-env' });
    expect(podId).toBe('wk-env');

    const env = await childEnv(podId);
    expect(env).toMatchObject({
      ...workerEnv('wk-env'),
      MODEL: 'tiny',
      API_TOKEN: SECRET_VALUE,
      PATH: process.env.PATH,
    });
    expect(env.RUNPLANE_TEST_SERVER_SECRET).toBeUndefined();
    expect(env.RUNPLANE_API_KEY).toBeUndefined();
    // stderr is its own pipe: its line may arrive after the stdout line read above.
    await waitFor(
      async () =>
        (await compute.logs(podId)).some(
          (l) => l.stream === 'stderr' && l.text === 'fixture on stderr',
        ),
      'the fixture line on stderr',
    );

    const row = await pods.findById(podId);
    expect(row).toMatchObject({
      id: 'wk-env',
      ownerId: OWNER,
      endpointId: 'ep-1',
      aiApiId: 'ep-1',
      slsVersion: 2,
      templateId: 'tpl-node',
      image: 'example/worker:1',
      gpuTypeId: 'cpu',
      desiredStatus: 'RUNNING',
      dockerEntrypoint: [process.execPath],
      ports: ['8000/http'],
      containerDiskInGb: 5,
      volumeMountPath: '/workspace',
      computeRef: 'wk-env',
      lastStartedAt: expect.any(Date),
      exitedAt: null,
      exitCode: null,
      env: {
        MODEL: 'tiny',
        API_TOKEN: '{{ RUNPOD_SECRET_token }}',
        RUNPOD_POD_ID: 'overridden-by-the-scheduler',
      },
    });
    expect(row!.lastStatusChange).toMatch(/^Started as a serverless worker: \d{4}-/);
    expect(JSON.stringify(row)).not.toContain('worker-key-of');
    expect(JSON.stringify(row)).not.toContain(SECRET_VALUE);
  });

  it("the endpoint's env goes over the template's (its secret references resolved alike) and under the RUNPOD_* env", async () => {
    const { podId } = await start('tpl-node', {
      workerId: 'wk-endpoint-env',
      endpointEnv: {
        MODEL: 'large',
        EXTRA_TOKEN: '{{ RUNPOD_SECRET_token }}',
        RUNPOD_POD_ID: 'not-the-worker-id',
        toString: 'an ordinary name',
        constructor: 'another',
      },
    });
    const env = await childEnv(podId);
    // Names an object inherits are variables like any other (they were dropped on the bus).
    expect([env.toString, env.constructor]).toEqual(['an ordinary name', 'another']);
    expect(env).toMatchObject({
      ...workerEnv('wk-endpoint-env'),
      MODEL: 'large',
      API_TOKEN: SECRET_VALUE,
      EXTRA_TOKEN: SECRET_VALUE,
    });
    const row = await pods.findById(podId);
    expect(row?.env).toMatchObject({ MODEL: 'large', EXTRA_TOKEN: '{{ RUNPOD_SECRET_token }}' });
    expect(JSON.stringify(row)).not.toContain(SECRET_VALUE);
  });

  it('answers a repeated start of a running worker with the same pod and no second process', async () => {
    const first = await start('tpl-node', { workerId: 'wk-again' });
    const pid = await pidOf(first.podId);
    const [a, b] = await Promise.all([
      start('tpl-node', { workerId: 'wk-again' }),
      start('tpl-node', { workerId: 'wk-again' }),
    ]);
    expect(a).toEqual(first);
    expect(b).toEqual(first);
    expect(await pidOf(first.podId)).toBe(pid);
    await expect(
      start('tpl-node', { workerId: 'wk-again', ownerId: 'someone-else' }),
    ).rejects.toMatchObject({ status: 409, code: 'POD_EXISTS' });
  });

  it('stops a worker: SIGTERM ends the process, the Pod is TERMINATED with its exit recorded', async () => {
    const exits: Array<{ workerId: string }> = [];
    const sub = await server.bus.onSignal(PodSignals.workerExited, (s) => {
      exits.push(s);
    });
    const { podId } = await start('tpl-node');
    await childEnv(podId);
    const pid = await pidOf(podId);
    expect(isAlive(pid)).toBe(true);

    expect(
      await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: podId }),
    ).toEqual({ ok: true });
    const row = await waitFor(async () => {
      const r = await pods.findById(podId);
      return r?.exitedAt && r;
    }, 'the exit on the Pod');
    expect(isAlive(pid)).toBe(false);
    expect((await compute.logs(podId)).map((l) => l.text)).toContain('got SIGTERM'); // output drained before the exit is reported
    expect(row).toMatchObject({ desiredStatus: 'TERMINATED', exitCode: 0 });
    expect(exits.filter((e) => e.workerId === podId)).toEqual([]); // the scheduler asked: nothing to tell it
    await sub.stop();
    expect(row.lastStatusChange).toMatch(/^Terminated by the scheduler \(exit code 0\): /);
    // Idempotent, and scoped to the owner.
    expect(
      await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: podId }),
    ).toEqual({ ok: true });
    await expect(
      server.bus.request(PodRpc.stopWorker, { ownerId: 'someone-else', workerId: podId }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: 'no-such-worker' }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('records a worker that exits by itself as EXITED with its exit code, and tells the scheduler at once', async () => {
    const exits: unknown[] = [];
    const sub = await server.bus.onSignal(PodSignals.workerExited, (s) => {
      exits.push(s);
    });
    const { podId } = await start('tpl-exits');
    const row = await waitFor(async () => {
      const r = await pods.findById(podId);
      return r?.exitedAt && r;
    }, 'the exit on the Pod');
    expect(row).toMatchObject({ desiredStatus: 'EXITED', exitCode: 7 });
    await waitFor(() => exits.length > 0, 'the workers.exited signal');
    expect(exits).toEqual([{ endpointId: 'ep-1', workerId: podId, exitCode: 7 }]);
    await sub.stop();
    expect(row.lastStatusChange).toMatch(/^Exited \(exit code 7\): /);
    // The scheduler retiring it afterwards keeps the story of the exit.
    expect(
      await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: podId }),
    ).toEqual({ ok: true });
    expect(await pods.findById(podId)).toMatchObject({
      desiredStatus: 'TERMINATED',
      exitCode: 7,
      lastStatusChange: row.lastStatusChange,
    });
  });

  it('refuses templates it cannot run, with clear 4xx errors', async () => {
    await expect(start('tpl-image-only', { workerId: 'wk-image' })).rejects.toMatchObject({
      status: 400,
      code: 'WORKER_COMMAND_MISSING',
      message: expect.stringMatching(
        /no dockerEntrypoint and no dockerStartCmd.*does not pull the image "example\/worker:1"/,
      ),
    });
    expect(await pods.findById('wk-image')).toBeNull();

    await expect(start('tpl-missing-binary', { workerId: 'wk-missing' })).rejects.toMatchObject({
      status: 400,
      code: 'WORKER_START_FAILED',
      message: expect.stringContaining('command not found: /nonexistent/bin/worker'),
    });
    expect(await pods.findById('wk-missing')).toMatchObject({
      desiredStatus: 'EXITED',
      lastStatusChange: expect.stringMatching(/^Failed to start/),
    });

    await expect(start('tpl-unknown')).rejects.toMatchObject({
      status: 404,
      code: 'TEMPLATE_NOT_FOUND',
    });

    // A reference to a secret that does not exist: no process, and the Pod says why.
    await expect(start('tpl-unknown-secret', { workerId: 'wk-secret' })).rejects.toMatchObject({
      status: 400,
      code: 'SECRET_NOT_FOUND',
    });
    expect(await compute.status('wk-secret')).toBeNull();
    expect(await pods.findById('wk-secret')).toMatchObject({
      desiredStatus: 'EXITED',
      lastStatusChange: expect.stringMatching(
        /^Failed to start \(the template env references secret that does not exist: "missing_one" \(in KEY\)/,
      ),
    });
    await expect(
      server.bus.request(PodRpc.startWorker, {
        ownerId: OWNER,
        workerId: '',
        endpointId: 'ep-1',
        templateId: 'tpl-node',
        slsVersion: 0,
        env: {},
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('tells template-graphql which Pods use a template and when the last one stopped', async () => {
    const usage = (templateId: string) => server.bus.request(PodRpc.templateUsage, { templateId });
    expect(await usage('tpl-never-used')).toEqual({ pods: 0, lastUsedAt: null });
    const before = await usage('tpl-node');
    expect(before.pods).toBeGreaterThan(0); // workers started above still run
    const { podId } = await start('tpl-node');
    expect((await usage('tpl-node')).pods).toBe(before.pods + 1);
    await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: podId });
    const exited = await waitFor(async () => {
      const r = await pods.findById(podId);
      return r?.exitedAt && r;
    }, 'the exit on the Pod');
    const after = await usage('tpl-node');
    expect(after.pods).toBe(before.pods);
    expect(Date.parse(after.lastUsedAt!)).toBeGreaterThanOrEqual(exited.exitedAt!.getTime());
  });
});

// SIGKILL of workers that ignore SIGTERM at shutdown is covered by the provider's own tests.
describe('pod-rest shutdown', () => {
  it('stops every worker process it started', async () => {
    const fixture = writeFixture();
    const server = await startTestServer([secretsVaultService, podRestService]);
    let stopped = false;
    try {
      await server.bus.serve(TemplateRpc.get, async ({ templateId }) =>
        template(templateId, { dockerStartCmd: [process.execPath, fixture] }),
      );
      const compute = server.app.get(ComputeProvider, { strict: false });
      // Records every Pod update and whether it reached the database.
      const pods = server.app.get(PodsRepository, { strict: false });
      const update = pods.update.bind(pods);
      const writes: Array<
        Promise<{ id: string; changes: Parameters<PodsRepository['update']>[1] }>
      > = [];
      pods.update = (id, changes) => {
        const write = update(id, changes);
        writes.push(write.then(() => ({ id, changes })));
        return write;
      };
      const updateRun = pods.updateRun.bind(pods);
      pods.updateRun = (id, ref, changes, onlyIfNotExited) => {
        const write = updateRun(id, ref, changes, onlyIfNotExited);
        writes.push(write.then(() => ({ id, changes })));
        return write;
      };
      const pids: number[] = [];
      for (const [i, templateId] of ['tpl-a', 'tpl-a', 'tpl-b'].entries()) {
        const workerId = `wk-shutdown-${i}`;
        await server.bus.request(PodRpc.startWorker, {
          ownerId: OWNER,
          workerId,
          endpointId: 'ep-2',
          templateId,
          slsVersion: 1,
          env: workerEnv(workerId, 'ep-2'),
        });
        // Wait until its SIGTERM handler is installed (it prints its env first).
        await waitFor(
          async () => (await compute.logs(workerId)).some((l) => l.text.startsWith('{')),
          'the worker to run',
        );
        pids.push((await compute.status(workerId))!.pid!);
      }
      expect(pids.every(isAlive)).toBe(true);
      await server.stop();
      stopped = true;
      expect(pids.filter(isAlive)).toEqual([]);
      // Their exits were recorded before the database closed.
      const exits = (await Promise.all(writes)).filter((w) => w.changes.exitedAt);
      expect(exits.map((w) => w.id).sort()).toEqual([
        'wk-shutdown-0',
        'wk-shutdown-1',
        'wk-shutdown-2',
      ]);
      for (const { changes } of exits) {
        expect(changes).toMatchObject({
          desiredStatus: 'EXITED',
          exitCode: 0,
          lastStatusChange: expect.stringMatching(/^Stopped with the server \(exit code 0\): /),
        });
      }
    } finally {
      if (!stopped) await server.stop();
    }
  }, 60_000);
});

describe('pod-rest restarted after a crash', () => {
  it('tells the scheduler that the workers whose process did not survive it exited, without waiting for their missed pings', async () => {
    const fixture = writeFixture();
    const dir = mkdtempSync(path.join(tmpdir(), 'runplane-pod-rest-restart-'));
    const env = { RUNPLANE_DATA_DIR: dir };
    // Opening a data directory sets this process's umask to 077; later test files share it.
    const umask = process.umask();
    const withServer = async (use: (s: TestServer) => Promise<void>) => {
      const s = await startTestServer([secretsVaultService, podRestService], env);
      try {
        await use(s);
      } finally {
        await s.stop();
      }
    };
    try {
      await withServer(async (s) => {
        await s.bus.serve(TemplateRpc.get, async ({ templateId }) =>
          template(templateId, { dockerStartCmd: [process.execPath, fixture] }),
        );
        await s.bus.request(PodRpc.startWorker, {
          ownerId: OWNER,
          workerId: 'wk-crash',
          endpointId: 'ep-3',
          templateId: 'tpl-a',
          slsVersion: 1,
          env: workerEnv('wk-crash', 'ep-3'),
        });
      });
      // The server stopped its worker and recorded the exit. A crash records nothing: the row
      // still says RUNNING while the process is gone (a local worker ends with pod-rest's pipe).
      await withServer(async (s) => {
        await s.app
          .get(PodsRepository, { strict: false })
          .update('wk-crash', { desiredStatus: 'RUNNING', exitedAt: null, exitCode: null });
      });

      await withServer(async (s) => {
        const told: WorkerExitedSignal[] = [];
        await s.bus.onSignal(PodSignals.workerExited, (signal) => void told.push(signal));
        await waitFor(async () => told.length > 0, 'the exit told to the scheduler', 20_000);
        expect(told[0]).toEqual({
          endpointId: 'ep-3',
          workerId: 'wk-crash',
          exitCode: null,
          reason: 'its process did not survive a restart of pod-rest',
          hostRestarted: true, // no fault of its template: no failed start
        });
        const row = await s.app.get(PodsRepository, { strict: false }).findById('wk-crash');
        expect(row).toMatchObject({ desiredStatus: 'EXITED', exitedAt: expect.any(Date) });
        expect(row!.lastStatusChange).toMatch(/did not survive a restart of the server/);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      process.umask(umask);
    }
  }, 90_000);
});
