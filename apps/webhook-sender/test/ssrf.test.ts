import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WebhookDeliveryView } from '@runplane/contracts';
import type { TestServer } from '@runplane/platform';
import { isPrivateAddress } from '../src/delivery-http/address-policy.js';
import { adminUser, publishFinished, Receiver, sleep, startSender, until } from './support.js';

describe('webhook-sender: address policy', () => {
  it('classifies private, loopback, link-local and mapped addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      'fc00::5',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ]) {
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    }
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      expect([a, isPrivateAddress(a)]).toEqual([a, false]);
    }
  });
});

describe('webhook-sender: SSRF guard with WEBHOOK_ALLOW_PRIVATE off', () => {
  let server: TestServer;
  let rx: Receiver;
  let owner: string;

  beforeAll(async () => {
    server = await startSender({ WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_MAX_ATTEMPTS: '1' });
    rx = await Receiver.start();
    owner = await adminUser(server);
  }, 60_000);
  afterAll(async () => {
    await rx?.stop();
    await server?.stop();
  });

  const settled = (jobId: string) =>
    until(
      async () => {
        const [d]: WebhookDeliveryView[] = (
          await server.call('GET', `/v1/webhooks/deliveries?jobId=${jobId}`)
        ).body;
        return d && d.status !== 'pending' ? d : null;
      },
      15_000,
      `delivery of ${jobId}`,
    );

  it('refuses loopback literals, names resolving to loopback (checked after DNS), mapped IPv6 and non-http schemes', async () => {
    const cases: Array<[string, RegExp]> = [
      [rx.url('/literal'), /127\.0\.0\.1 is a private/],
      [rx.url('/named', 'localhost'), /localhost resolves to (127\.0\.0\.1|::1), a private/],
      [`http://[::ffff:127.0.0.1]:${rx.port}/mapped`, /private/],
      [`http://169.254.169.254/latest/meta-data`, /169\.254\.169\.254 is a private/],
      [`ftp://127.0.0.1:${rx.port}/ftp`, /only http and https/],
      ['not a url', /invalid webhook URL/],
    ];
    const published = await Promise.all(cases.map(([url]) => publishFinished(server, owner, url)));
    for (const [i, p] of published.entries()) {
      const d = await settled(p.event.jobId);
      expect([d.url, d.status, d.attempts[0].statusCode, d.attempts[0].error]).toEqual([
        cases[i][0],
        'failed',
        null,
        expect.stringMatching(cases[i][1]),
      ]);
    }
    await sleep(200);
    expect(rx.calls).toHaveLength(0); // nothing reached the receiver
  });
});
