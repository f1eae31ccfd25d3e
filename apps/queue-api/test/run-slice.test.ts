import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import { SchedulerRpc, TemplateRpc, VaultRpc, type Template } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { schedulerService } from '@runplane/scheduler';
import { secretsVaultService } from '@runplane/secrets-vault';
import { queueApiService } from '../src/index.js';

describe('the /run slice through queue-api, the vault and the scheduler', () => {
  let server: TestServer;
  let epA: string;
  let epB: string;

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, schedulerService, queueApiService]);
    // Endpoints need an existing template; template-graphql is not part of this slice.
    await server.bus.serve(
      TemplateRpc.get,
      async ({ templateId }) => ({ id: templateId, name: 'slice' }) as Template,
    );
    const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
      keyHash: hashApiKey(server.apiKey),
    });
    const create = () =>
      server.bus.request(SchedulerRpc.createEndpoint, {
        ownerId: principal!.userId,
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
});
