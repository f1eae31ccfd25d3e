import { afterAll, describe, expect, it } from '@jest/globals';
import { DatabaseTargets } from '@runplane/database';
import { scratchDatabase, startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { queueApiService } from '../src/index.js';
import { PostgresRateCounter } from '../src/limits/rate-counter.js';
import { limitsSuite } from './limits.suite.js';
import { SchedulerStandIn } from './support/scheduler-stand-in.js';

// Cluster mode: queue-api on a real PostgreSQL, where every replica counts in the same rows.
const database = scratchDatabase('queue-api', POSTGRES_URL, uniqueName('runplane_qa_limits'));
let used = false;

limitsSuite('PostgreSQL', async () => {
  if (!(await requireService('postgres', 'queue limits on PostgreSQL'))) return null;
  used = true;
  return { DATABASE_URL_QUEUE_API: database.url };
});

describe('queue limits shared by two queue-api replicas (PostgreSQL)', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  }, 30_000);

  it('a rate limit holds across replicas: 1 purge on each, the 3rd on either is refused', async () => {
    if (!(await requireService('postgres', 'queue limits shared by replicas'))) return;
    used = true;
    for (let i = 0; i < 2; i++) {
      const server = await startTestServer([secretsVaultService, queueApiService], {
        DATABASE_URL_QUEUE_API: database.url,
      });
      servers.push(server);
      (await SchedulerStandIn.serve(server.bus))
        .on('purgeQueue', () => ({ removed: 0, status: 'completed' }))
        .on('health', () => ({
          jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
          workers: { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 },
        }));
    }
    const [a, b] = servers;
    // Both servers' bootstrap admins are the same user (usr_admin), as with one vault.
    const ep = `ep-shared-${Date.now()}`;
    expect((await a.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(200);
    expect((await b.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(200);
    expect((await a.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(429);
    expect((await b.call('POST', `/v2/${ep}/purge-queue`)).status).toBe(429);
  }, 90_000);

  it('concurrent hits of two replicas, grouped into shared statements, each get their own place in the window', async () => {
    if (servers.length < 2) return; // the test above skipped
    const [a, b] = servers.map(
      (s) =>
        new PostgresRateCounter(
          s.app.get(PrismaClient, { strict: false }),
          s.app.get(DatabaseTargets, { strict: false }).targetFor('queue-api').schema,
        ),
    );
    const key = `u/ep-${Date.now()}/run`;
    const hits = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).hit(key)));
    expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
    expect(hits.every((h) => h.msBeforeReset > 0 && h.msBeforeReset <= 10_000)).toBe(true);
    expect((await a.hit(`${key}-other`)).count).toBe(1);
    expect((await b.hit(key)).count).toBe(61);
  }, 30_000);
});

afterAll(async () => {
  if (used) await database.drop();
});
