import { afterAll, describe, expect, it } from '@jest/globals';
import type { WebhookDeliveryView } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { adminUser, FAST_ENV, publishFinished, Receiver, startSender, until } from './support.js';

/**
 * Durability in standalone mode (embedded database + journaled bus): an event published while
 * webhook-sender is not running, and a retry pending across a restart, are both delivered.
 */
describe('webhook-sender: restarts lose nothing', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runplane-wh-'));
  const env = {
    RUNPLANE_DATA_DIR: dir,
    RUNPLANE_API_KEY: `restart-${randomBytes(12).toString('hex')}`,
    RUNPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_RETRY_DELAY_MS: '3000',
  };
  let rx: Receiver;
  let server: TestServer | undefined;
  /** The deliveries of a job, asked with this test's own admin key (the server keeps it across restarts). */
  const deliveries = async (jobId: string): Promise<WebhookDeliveryView[]> =>
    (await (
      await fetch(`${server!.url}/v1/webhooks/deliveries?jobId=${jobId}`, {
        headers: { authorization: `Bearer ${env.RUNPLANE_API_KEY}` },
      })
    ).json()) as WebhookDeliveryView[];
  afterAll(async () => {
    await server?.stop();
    await rx?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers an event published while it was down, and continues a retry after a restart with the same webhook-id', async () => {
    rx = await Receiver.start();
    // 1. Only the vault runs: the event waits in the bus journal for the webhook-sender group.
    server = await startTestServer([secretsVaultService], { ...FAST_ENV, ...env });
    const owner = await adminUser(server, env.RUNPLANE_API_KEY);
    const early = await publishFinished(server, owner, rx.url('/early'));
    await server.stop();

    // 2. webhook-sender starts: it gets the event; the receiver fails the first attempt.
    rx.plan('/retry', [500]);
    server = await startSender(env);
    await rx.waitFor('/early', 1, 30_000);
    const retry = await publishFinished(server, owner, rx.url('/retry'));
    await rx.waitFor('/retry', 1);
    await until(
      async () => {
        const [d] = await deliveries(retry.event.jobId);
        return d?.attemptCount === 1;
      },
      10_000,
      'the first attempt to be recorded',
    );
    await server.stop();
    server = undefined;
    expect(rx.received('/retry')).toHaveLength(1); // the retry was not due yet when it stopped

    // 3. Restarted before the retry was due: the retry comes from the database, same webhook-id.
    server = await startSender(env);
    const calls = await rx.waitFor('/retry', 2, 30_000);
    expect(calls.map((c) => c.headers['webhook-id'])).toEqual([retry.id, retry.id]);
    expect(rx.received('/early')[0].headers['webhook-id']).toBe(early.id);
    const [d] = await deliveries(retry.event.jobId);
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 200]);
  }, 120_000);
});
