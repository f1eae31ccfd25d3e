import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestServer, type TestServer } from '@runplane/platform';
import { schedulerService } from '@runplane/scheduler';
import { secretsVaultService } from '@runplane/secrets-vault';
import { queueApiService } from '../src/index.js';

describe('the /run slice through queue-api, the vault and the scheduler', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer([secretsVaultService, schedulerService, queueApiService]); }, 60_000);
  afterAll(async () => { await server?.stop(); });

  it('creates a job IN_QUEUE and reads it back, only through its endpoint', async () => {
    const run = await server.call('POST', '/v2/ep-a/run', { input: { n: 1 } });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    const status = await server.call('GET', `/v2/ep-a/status/${run.body.id}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ id: run.body.id, status: 'IN_QUEUE' });
    expect(status.body).not.toHaveProperty('output');
    const elsewhere = await server.call('GET', `/v2/ep-b/status/${run.body.id}`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toMatchObject({ status: 404, error: expect.any(String), message: expect.any(String) });
  });

  it('rejects bad input with 400 details and unknown keys with 401', async () => {
    const bad = await server.call('POST', '/v2/ep-a/run', { input: 'x', policy: { ttl: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['input', 'policy.ttl']);
    const anon = await server.call('POST', '/v2/ep-a/run', { input: {} }, { authorization: 'Bearer wrong-key' });
    expect(anon.status).toBe(401);
  });
});
