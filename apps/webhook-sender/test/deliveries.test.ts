import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { verifyWebhook, type WebhookDeliveryView } from '@runplane/contracts';
import type { TestServer } from '@runplane/platform';
import { DeliveriesRepository } from '../src/deliveries/deliveries.repository.js';
import { DeliveriesService } from '../src/deliveries/deliveries.service.js';
import { adminUser, publishFinished, Receiver, sleep, startSender, until } from './support.js';

/** webhook-sender driven as in production: job.finished events on the bus in, HTTP calls out, /v1/webhooks to look. */
describe('webhook-sender: deliveries', () => {
  let server: TestServer;
  let rx: Receiver;
  let owner: string;

  beforeAll(async () => {
    server = await startSender({
      WEBHOOK_PER_HOST_CONCURRENCY: '2',
      WEBHOOK_MAX_RESPONSE_BYTES: '65536',
    });
    rx = await Receiver.start();
    owner = await adminUser(server);
  }, 60_000);
  afterAll(async () => {
    await rx?.stop();
    await server?.stop();
  });

  const deliveries = async (jobId: string): Promise<WebhookDeliveryView[]> => {
    const res = await server.call(
      'GET',
      `/v1/webhooks/deliveries?jobId=${encodeURIComponent(jobId)}`,
    );
    expect(res.status).toBe(200);
    return res.body;
  };
  const settled = (jobId: string) =>
    until(
      async () => {
        const [d] = await deliveries(jobId);
        return d && d.status !== 'pending' ? d : null;
      },
      20_000,
      `delivery of ${jobId} to settle`,
    );

  it('POSTs the body as JSON with Standard Webhooks headers that verify with the account secret', async () => {
    const { id, event } = await publishFinished(server, owner, rx.url('/ok'));
    const [call] = await rx.waitFor('/ok', 1);
    expect(call.method).toBe('POST');
    expect(call.headers['content-type']).toBe('application/json');
    expect(call.body).toBe(event.body); // byte for byte
    expect(call.headers['webhook-id']).toBe(id);
    const secret = await server.call('GET', '/v1/webhooks/secret');
    expect(secret.status).toBe(200);
    expect(secret.body.key).toMatch(/^whsec_/);
    expect(
      verifyWebhook(secret.body.key, call.body, call.headers as Record<string, string>),
    ).toEqual(JSON.parse(event.body));

    const d = await settled(event.jobId);
    expect(d).toMatchObject({
      id,
      jobId: event.jobId,
      endpointId: 'ep-1',
      event: 'COMPLETED',
      url: rx.url('/ok'),
      status: 'delivered',
      attemptCount: 1,
      nextAttemptAt: null,
    });
    expect(d.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        statusCode: 200,
        error: null,
        latencyMs: expect.any(Number),
      }),
    ]);
    expect((await server.call('GET', `/v1/webhooks/deliveries/${id}`)).body).toEqual(d);
  });

  it('a redelivered event creates nothing new: one delivery, one call', async () => {
    const { id, event } = await publishFinished(server, owner, rx.url('/dup'));
    await rx.waitFor('/dup', 1);
    // What the bus does after a crash between storing the delivery and acknowledging the event.
    await server.app.get(DeliveriesService, { strict: false }).accept(event, id);
    await sleep(500);
    expect(rx.received('/dup')).toHaveLength(1);
    expect(await deliveries(event.jobId)).toHaveLength(1);
  });

  it('non-2xx: 3 attempts in all with the same webhook-id, each recorded; then redeliver sends it again under the same id', async () => {
    rx.plan('/down', [500, 502, 500]);
    const { id, event } = await publishFinished(server, owner, rx.url('/down'));
    const d = await settled(event.jobId);
    expect(d).toMatchObject({ status: 'failed', attemptCount: 3 });
    expect(d.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, 'receiver answered 500'],
      [2, 502, 'receiver answered 502'],
      [3, 500, 'receiver answered 500'],
    ]);
    const calls = rx.received('/down');
    expect(calls.map((c) => c.headers['webhook-id'])).toEqual([id, id, id]);
    expect(new Set(calls.map((c) => c.body)).size).toBe(1);
    await sleep(600); // no 4th attempt
    expect(rx.received('/down')).toHaveLength(3);

    const again = await server.call('POST', `/v1/webhooks/deliveries/${id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, status: expect.stringMatching(/pending|delivered/) });
    const [, , , fourth] = await rx.waitFor('/down', 4);
    expect(fourth.headers['webhook-id']).toBe(id);
    expect(await settled(event.jobId)).toMatchObject({ status: 'delivered', attemptCount: 4 });

    expect(
      (await server.call('POST', '/v1/webhooks/deliveries/msg_nope/redeliver')).body,
    ).toMatchObject({ status: 404, code: 'WEBHOOK_DELIVERY_NOT_FOUND' });
  });

  it('one failure then success: 2 attempts; any 2xx is success', async () => {
    rx.plan('/once', [503]);
    rx.plan('/accepted', [204]);
    const once = await publishFinished(server, owner, rx.url('/once'));
    const accepted = await publishFinished(server, owner, rx.url('/accepted'));
    expect(await settled(once.event.jobId)).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(await settled(accepted.event.jobId)).toMatchObject({
      status: 'delivered',
      attemptCount: 1,
    });
  });

  it('does not follow redirects, times out silent receivers, and reads at most the response cap', async () => {
    rx.plan('/redirect', ['redirect', 'redirect', 'redirect']);
    rx.plan('/silent', ['hang', 200]);
    rx.plan('/huge', ['huge']);
    const redirect = await publishFinished(server, owner, rx.url('/redirect'));
    const silent = await publishFinished(server, owner, rx.url('/silent'));
    const huge = await publishFinished(server, owner, rx.url('/huge'));

    const r = await settled(redirect.event.jobId);
    expect(r.attempts[0]).toMatchObject({
      statusCode: 302,
      error: expect.stringContaining('not followed'),
    });
    expect(rx.received('/redirected')).toHaveLength(0);
    const s = await settled(silent.event.jobId);
    expect(s).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(s.attempts[0]).toMatchObject({ statusCode: null, error: 'timed out after 1500 ms' });
    const h = await settled(huge.event.jobId);
    expect(h.status).toBe('delivered');
    expect(h.attempts[0]).toMatchObject({ statusCode: 200, error: null });
  }, 30_000);

  it('caps attempts in flight per host: a slow receiver does not hold up another', async () => {
    const other = await Receiver.start();
    try {
      rx.plan('/slow', ['hang', 'hang', 'hang', 'hang', 'hang']);
      const slow = await Promise.all(
        [1, 2, 3, 4, 5].map(() => publishFinished(server, owner, rx.url('/slow'))),
      );
      await rx.waitFor('/slow', 2);
      const fast = await publishFinished(server, owner, other.url('/fast'));
      await other.waitFor('/fast', 1);
      expect(await settled(fast.event.jobId)).toMatchObject({ status: 'delivered' });
      expect(rx.received('/slow')).toHaveLength(2); // the other three wait for a slot of this host
      rx.release();
      for (let i = 0; i < 6; i++) {
        await sleep(300);
        rx.release();
      }
      for (const s of slow)
        expect(await settled(s.event.jobId)).toMatchObject({ status: 'delivered' });
      expect(rx.maxActive.get('/slow')).toBe(2);
    } finally {
      await other.stop();
    }
  }, 30_000);

  it('looks for due attempts when something changes, not again and again while one runs', async () => {
    rx.plan('/held', ['hang']);
    const held = await publishFinished(server, owner, rx.url('/held'));
    await rx.waitFor('/held', 1);
    const passes = jest.spyOn(server.app.get(DeliveriesRepository, { strict: false }), 'claimDue');
    try {
      // An upper bound over a window: a busy machine makes fewer passes, never more. The poll
      // (every 100 ms here) is the only reason left to look; waking for the attempt in flight
      // made a pass every few milliseconds (about a hundred in this window).
      await sleep(600);
      expect(passes.mock.calls.length).toBeLessThanOrEqual(12);
    } finally {
      passes.mockRestore();
      rx.release();
    }
    expect(await settled(held.event.jobId)).toMatchObject({ status: 'delivered' });
  }, 30_000);

  it('starts the first attempt of a new delivery at once, without a pass to find it', async () => {
    const claimed: string[] = [];
    const repo = server.app.get(DeliveriesRepository, { strict: false });
    const claimDue = repo.claimDue.bind(repo);
    const passes = jest.spyOn(repo, 'claimDue').mockImplementation(async (...args) => {
      const rows = await claimDue(...args);
      claimed.push(...rows.map((r) => r.id));
      return rows;
    });
    try {
      const { id, event } = await publishFinished(server, owner, rx.url('/direct'));
      await rx.waitFor('/direct', 1);
      expect(await settled(event.jobId)).toMatchObject({ status: 'delivered', attemptCount: 1 });
      expect(claimed).not.toContain(id);
    } finally {
      passes.mockRestore();
    }
  }, 30_000);

  it("lists only the caller's deliveries; needs a key", async () => {
    await publishFinished(server, 'someone-else', rx.url('/foreign'));
    await rx.waitFor('/foreign', 1);
    const all: WebhookDeliveryView[] = (await server.call('GET', '/v1/webhooks/deliveries')).body;
    expect(all.length).toBeGreaterThan(3);
    expect(all.some((d) => d.url.endsWith('/foreign'))).toBe(false);
    const anonymous = await fetch(`${server.url}/v1/webhooks/deliveries`);
    expect(anonymous.status).toBe(401);
  });
});
