import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '../src/index.js';

// The management APIs' per-key limit (platform, docs/limits.md), seen through the vault's /v1 routes.
describe('management API rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer([secretsVaultService], { RUNPLANE_MANAGEMENT_RATE_LIMIT: '3' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('allows 3 requests per 10 s per key, then 429 with Retry-After; other keys and /healthz are unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await server.call('GET', '/v1/apikeys')).status).toBe(200);
    const refused = await server.call('GET', '/v1/apikeys');
    expect(refused).toMatchObject({
      status: 429,
      body: {
        status: 429,
        code: 'RATE_LIMITED',
        error: expect.stringMatching(/3 requests per 10 s per key/),
      },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter >= 1 && retryAfter <= 10).toBe(true);
    // Another presented key has its own budget (an unknown key: counted, then 401 from the guard).
    expect(
      (await server.call('GET', '/v1/apikeys', undefined, { authorization: 'Bearer someone-else' }))
        .status,
    ).toBe(401);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
