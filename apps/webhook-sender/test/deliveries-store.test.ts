import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { scratchDatabase, type TestServer } from '@runplane/platform';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { DeliveriesRepository, type NewDelivery } from '../src/deliveries/deliveries.repository.js';
import { startSender } from './support.js';

// The statements every delivery goes through, grouped when calls come together, on both stores:
// what each call gets back must not depend on the company it had in its statement.
const pgUp = await requireService('postgres', 'webhook deliveries on PostgreSQL');
const database = scratchDatabase(
  'webhook-sender',
  POSTGRES_URL,
  uniqueName('runplane_webhooks_test'),
);

storeSuite('the embedded database', {});
if (pgUp) storeSuite('PostgreSQL', { DATABASE_URL_WEBHOOK_SENDER: database.url });
afterAll(async () => {
  if (pgUp) await database.drop();
});

function storeSuite(name: string, env: Record<string, string>) {
  describe(`webhook deliveries' statements (${name})`, () => {
    let server: TestServer;
    let repo: DeliveriesRepository;
    let seq = 0;

    beforeAll(async () => {
      // Nothing is ever due for the dispatcher here: every delivery is created leased.
      server = await startSender(env);
      repo = server.app.get(DeliveriesRepository, { strict: false });
    }, 60_000);
    afterAll(() => server?.stop());

    const delivery = (tag: string): NewDelivery => ({
      id: `msg_${tag}_${++seq}`,
      jobId: `job-${tag}-${seq}`,
      endpointId: 'ep-store',
      ownerId: 'owner-store',
      event: 'COMPLETED',
      url: `https://hooks.example.test/${tag}`,
      host: 'hooks.example.test',
      body: JSON.stringify({ id: `job-${tag}-${seq}`, output: 'é \u0000 "q"' }),
      maxAttempts: 2,
    });
    const leased = () => new Date(Date.now() + 60_000);

    it('creates deliveries made together, each once: a repeat of the same event, in the same batch or later, creates nothing', async () => {
      const now = new Date('2026-11-29T10:00:00.123Z');
      const batch = Array.from({ length: 6 }, (_, i) => delivery(`c${i}`));
      const created = await Promise.all([
        ...batch.map((d) => repo.create(d, now, leased())),
        repo.create(batch[0], now, leased()), // a redelivery racing the first
      ]);
      expect(created.slice(0, 6).map((row) => row?.id)).toEqual(batch.map((d) => d.id));
      expect(created[6]).toBeNull();
      expect(created[2]).toMatchObject({
        ...batch[2],
        status: 'pending',
        attemptCount: 0,
        nextAttemptAt: now,
        createdAt: now,
        deliveredAt: null,
      });
      expect(created[2]!.claimedUntil).toBeInstanceOf(Date);
      expect(await repo.create(batch[3], now)).toBeNull();
    });

    it('records attempts that end together, each with its own outcome and what follows it', async () => {
      const now = new Date('2026-11-29T10:00:01.456Z');
      const [ok, failing, last] = await Promise.all(
        ['ok', 'retry', 'last'].map((tag) => repo.create(delivery(tag), now, leased())),
      );
      const lastTry = { ...last!, attemptCount: 1 }; // its second and last allowed attempt
      const after = new Date(now.getTime() + 10);
      const [delivered, pending, failed] = await Promise.all([
        repo.recordAttempt(
          ok!,
          { ok: true, statusCode: 204, latencyMs: 7, error: null },
          after,
          1000,
        ),
        repo.recordAttempt(
          failing!,
          { ok: false, statusCode: 503, latencyMs: 9, error: 'HTTP 503' },
          after,
          1000,
        ),
        repo.recordAttempt(
          lastTry,
          { ok: false, statusCode: null, latencyMs: 1500, error: 'timed out' },
          after,
          1000,
        ),
      ]);
      expect(delivered).toMatchObject({
        id: ok!.id,
        status: 'delivered',
        attemptCount: 1,
        claimedUntil: null,
        deliveredAt: after,
      });
      expect(pending).toMatchObject({
        id: failing!.id,
        status: 'pending',
        attemptCount: 1,
        nextAttemptAt: new Date(after.getTime() + 1000),
        deliveredAt: null,
      });
      expect(failed).toMatchObject({ id: last!.id, status: 'failed', attemptCount: 2 });
      const seen = await repo.findForOwner('owner-store', failing!.id);
      expect(seen!.attempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          statusCode: 503,
          latencyMs: 9,
          error: 'HTTP 503',
          createdAt: after,
        }),
      ]);
      await expect(
        repo.recordAttempt(
          { ...ok!, id: 'msg_never_created' },
          { ok: true, statusCode: 200, latencyMs: 1, error: null },
          after,
          1000,
        ),
      ).rejects.toThrow(/msg_never_created is gone/);
    });
  });
}
