import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { secretsVaultService } from '@runplane/secrets-vault';
import { startTestServer, type TestServer } from '@runplane/platform';
import { queueApiService } from '../src/index.js';
import { deferred, SchedulerStandIn, until } from './support/scheduler-stand-in.js';

const HEALTH = (running: number) => ({
  jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
  workers: { idle: 0, initializing: 0, ready: 0, running, throttled: 0, unhealthy: 0 },
});

let seq = 0;
const endpoint = () => `ep-limits-${Date.now().toString(36)}-${seq++}`;

/**
 * The per-endpoint limits (docs/limits.md) through HTTP, against the store a deployment uses: memory (one
 * process, embedded database) or PostgreSQL shared by replicas (`env` points queue-api at it).
 * `env()` returns null when that store is not available (the suite is then skipped loudly).
 */
export function limitsSuite(store: string, env: () => Promise<Record<string, string> | null>) {
  describe(`queue limits (${store})`, () => {
    let server: TestServer;
    let sched: SchedulerStandIn;
    let settings: Record<string, string> | null;

    beforeAll(async () => {
      settings = await env();
      if (!settings) return;
      server = await startTestServer([secretsVaultService, queueApiService], {
        RUNPLANE_REQUESTS_PER_WORKER: '5',
        RUNPLANE_WORKER_COUNT_TTL_MS: '100',
        ...settings,
      });
      sched = await SchedulerStandIn.serve(server.bus);
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    }, 30_000);
    beforeEach(() => {
      sched?.reset();
      sched?.on('purgeQueue', () => ({ removed: 0, status: 'completed' }));
      sched?.on('health', () => HEALTH(0));
    });

    it('purge-queue: the 3rd call in 10 s gets 429 with Retry-After and a JSON error; other endpoints are unaffected', async () => {
      if (!settings) return;
      const ep = endpoint();
      for (let i = 0; i < 2; i++)
        expect((await server.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(200);
      const refused = await server.call('POST', `/v2/${ep}/purge-queue`);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(10);
      expect(refused.body).toMatchObject({
        status: 429,
        code: 'RATE_LIMITED',
        error: expect.stringMatching(
          /rate limit of purge-queue on endpoint .* exceeded \(2 requests per 10 s\)/,
        ),
      });
      expect(sched.callsOf('purgeQueue')).toHaveLength(2); // the refused call never reached the scheduler
      expect((await server.call('POST', `/v2/${endpoint()}/purge-queue`)).status).toBe(200);
    });

    it('the effective limit is running workers × requests_per_worker when that is higher than the base', async () => {
      if (!settings) return;
      sched.on('health', () => HEALTH(1)); // 1 worker × 5 per window > base 2
      const ep = endpoint();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await server.call('POST', `/v2/${ep}/purge-queue`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      // The workers were asked about only once the base limit was used up (and then from a short cache).
      expect(sched.callsOf('health').length).toBeGreaterThanOrEqual(1);
      expect(sched.callsOf('health').length).toBeLessThanOrEqual(4);
    });

    it('limits requests in flight: /requests allows 2 at once, the 3rd waits for a slot (429 until then)', async () => {
      if (!settings) return;
      const ep = endpoint();
      const gate = deferred<void>();
      sched.on('listJobs', async () => {
        await gate.promise;
        return { requests: [], nextCursor: null };
      });
      const held = [
        server.call('GET', `/v2/${ep}/requests`),
        server.call('GET', `/v2/${ep}/requests`),
      ];
      await until(() => sched.callsOf('listJobs').length === 2, 5000, 'two /requests in flight');
      const third = await server.call('GET', `/v2/${ep}/requests`);
      expect(third).toMatchObject({
        status: 429,
        body: {
          code: 'RATE_LIMITED',
          error: expect.stringMatching(/too many concurrent requests requests/),
        },
      });
      expect(third.headers.get('retry-after')).toBe('1');
      gate.resolve();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
      sched.on('listJobs', () => ({ requests: [], nextCursor: null }));
      expect((await server.call('GET', `/v2/${ep}/requests`)).status).toBe(200);
    });

    it('counts per user: another key on the same endpoint id has its own budget', async () => {
      if (!settings) return;
      const ep = endpoint();
      for (let i = 0; i < 2; i++) await server.call('POST', `/v2/${ep}/purge-queue`);
      expect((await server.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(429);
      const user = await server.call('POST', '/v1/users', { name: 'other' });
      const key = await server.call('POST', '/v1/apikeys', {
        name: 'other',
        userId: user.body.id,
        scope: 'readwrite',
      });
      const other = await server.call('POST', `/v2/${ep}/purge-queue`, undefined, {
        authorization: `Bearer ${key.body.key}`,
      });
      expect(other.status).toBe(200);
    });
  });
}
