import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import {
  QueueApiSignals,
  RELAY_HEARTBEAT_MS,
  SchedulerRpc,
  TemplateRpc,
  VaultRpc,
  WORKER_LONG_POLL_MS,
  type Template,
  type WorkerRelaySignal,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { schedulerService } from '@runplane/scheduler';
import { secretsVaultService } from '@runplane/secrets-vault';
import { queueApiService } from '../src/index.js';
import { ReplicaRegistry } from '../src/limits/replica-registry.js';
import { until } from './support/scheduler-stand-in.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the /run slice through queue-api, the vault and the scheduler', () => {
  let server: TestServer;
  let epA: string;
  let epB: string;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, schedulerService, queueApiService], {
      // Short enough that a lost worker's detection fits in a test (the minimum is 1000).
      RUNPLANE_WORKER_PING_INTERVAL_MS: '1000',
      RUNPLANE_LONG_POLL_RECHECK_MS: '500',
    });
    // Endpoints need an existing template; template-graphql is not part of this slice.
    await server.bus.serve(
      TemplateRpc.get,
      async ({ templateId }) => ({ id: templateId, name: 'slice' }) as Template,
    );
    const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
      keyHash: hashApiKey(server.apiKey),
    });
    userId = principal!.userId;
    const create = () =>
      server.bus.request(SchedulerRpc.createEndpoint, {
        ownerId: userId,
        endpoint: { templateId: 'tpl-slice', workersMin: 0, workersMax: 0 },
      });
    [epA, epB] = [(await create()).id, (await create()).id];
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('creates a job IN_QUEUE and reads it back, only through its endpoint', async () => {
    const run = await server.call('POST', `/v2/${epA}/run`, { input: { n: 1 } });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    const status = await server.call('GET', `/v2/${epA}/status/${run.body.id}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ id: run.body.id, status: 'IN_QUEUE' });
    expect(status.body).not.toHaveProperty('output');
    const elsewhere = await server.call('GET', `/v2/${epB}/status/${run.body.id}`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toMatchObject({
      status: 404,
      error: expect.any(String),
      message: expect.any(String),
    });
    const unknown = await server.call('POST', '/v2/no-such-endpoint/run', { input: {} });
    expect(unknown.status).toBe(404);
  });

  it('rejects bad input with 400 details and unknown keys with 401', async () => {
    const bad = await server.call('POST', `/v2/${epA}/run`, { input: 'x', policy: { ttl: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'input',
      'policy.ttl',
    ]);
    const anon = await server.call(
      'POST',
      `/v2/${epA}/run`,
      { input: {} },
      { authorization: 'Bearer wrong-key' },
    );
    expect(anon.status).toBe(401);
  });

  it('a runsync whose wait elapses answers {id, status} and the job stays queued', async () => {
    const res = await server.call('POST', `/v2/${epA}/runsync?wait=1000`, { input: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^sync-/), status: 'IN_QUEUE' });
    const stream = await server.call('GET', `/v2/${epA}/stream/${res.body.id}?wait=1000`);
    expect(stream.body).toEqual({ id: res.body.id, status: 'IN_QUEUE', stream: [] });
  });

  it("/status?ttl= is a write: a readonly key is refused and the job stays; a ttl the job's age has passed is refused, never expiring it", async () => {
    // An ordinary user with a readwrite and a readonly key, and an endpoint of theirs.
    const user = await server.call('POST', '/v1/users', { name: 'ttl-user' });
    const keyOf = async (scope: string) =>
      (await server.call('POST', '/v1/apikeys', { name: scope, userId: user.body.id, scope })).body
        .key as string;
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    const [rw, ro] = [await keyOf('readwrite'), await keyOf('readonly')];
    const ep = await server.bus.request(SchedulerRpc.createEndpoint, {
      ownerId: user.body.id,
      endpoint: { templateId: 'tpl-slice', workersMin: 0, workersMax: 0 },
    });
    const run = await server.call('POST', `/v2/${ep.id}/run`, { input: {} }, as(rw));
    expect(run.status).toBe(200);
    // The job was created before this moment: wait until it is older than the smallest ttl.
    const submitted = Date.now();
    await until(() => Date.now() > submitted + 10_100, 60_000, 'the job to be older than 10 s');

    const status = (key: string, query = '', method: 'GET' | 'POST' = 'GET') =>
      server.call(method, `/v2/${ep.id}/status/${run.body.id}${query}`, undefined, as(key));
    for (const method of ['GET', 'POST'] as const) {
      expect(await status(ro, '?ttl=10000', method)).toMatchObject({
        status: 401,
        body: { status: 401, error: expect.stringMatching(/setting ttl needs a readwrite key/) },
      });
    }
    expect(await status(ro)).toMatchObject({ status: 200, body: { id: run.body.id } });

    // Even the owner's readwrite key cannot expire the job with a ttl shorter than its age.
    const tooShort = await status(rw, '?ttl=10000');
    expect(tooShort).toMatchObject({
      status: 400,
      body: { status: 400, details: [{ path: 'ttl', message: expect.any(String) }] },
    });
    expect(tooShort.body.error).toMatch(/would expire it at once; the job is kept/);
    expect(await status(ro)).toMatchObject({ status: 200, body: { id: run.body.id } });
    // A ttl longer than its age is set.
    expect(await status(rw, '?ttl=3600000')).toMatchObject({
      status: 200,
      body: { id: run.body.id, status: 'IN_QUEUE' },
    });
  }, 90_000);

  it("a worker that vanishes while it holds a job and a job-stop poll is lost three ping intervals later, not when the poll's wait ends", async () => {
    const ep = await server.bus.request(SchedulerRpc.createEndpoint, {
      ownerId: userId,
      endpoint: { templateId: 'tpl-slice', workersMin: 0, workersMax: 0 },
    });
    const worker = { headers: { authorization: server.apiKey } };
    const run = await server.call('POST', `/v2/${ep.id}/run`, { input: { n: 1 } });
    const take = await fetch(`${server.url}/v2/${ep.id}/job-take/w-vanish`, worker);
    expect(await take.json()).toMatchObject({ id: run.body.id });
    // Its job-stop poll is held at the scheduler (a few rounds of it) when its process dies.
    const dies = new AbortController();
    const stops = fetch(`${server.url}/v2/${ep.id}/job-stop/w-vanish`, {
      ...worker,
      signal: dies.signal,
    }).catch(() => undefined);
    await sleep(1500);
    dies.abort();
    await stops;
    const died = Date.now();
    const status = async () =>
      (await server.call('GET', `/v2/${ep.id}/status/${run.body.id}`)).body.status;
    expect(await status()).toBe('IN_PROGRESS');
    // Requeued once lost: within 20 s, where the poll's rounds alone would have lasted 30 s.
    while ((await status()) !== 'IN_QUEUE') {
      if (Date.now() - died > 20_000) throw new Error('the job was not requeued within 20 s');
      await sleep(100);
    }
    expect(Date.now() - died).toBeLessThan(WORKER_LONG_POLL_MS);
  }, 60_000);

  it("announces on the bus, every heartbeat, that it relays workers' calls (the scheduler counts their silence only then)", async () => {
    const heard: { at: number; signal: WorkerRelaySignal }[] = [];
    const sub = await server.bus.onSignal(QueueApiSignals.workerRelay, (signal) => {
      heard.push({ at: Date.now(), signal });
    });
    try {
      await until(() => heard.length >= 4, 10_000, 'four relay heartbeats');
      expect(new Set(heard.map((h) => h.signal.replica)).size).toBe(1);
      expect(heard[0].signal.replica).toBe(server.app.get(ReplicaRegistry, { strict: false }).id);
      // About one per period (a loaded machine delays timers, never brings them forward much).
      const span = heard[3].at - heard[0].at;
      expect(span).toBeGreaterThanOrEqual(3 * RELAY_HEARTBEAT_MS - 100);
    } finally {
      await sub.stop();
    }
  });
});
