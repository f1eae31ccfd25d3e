import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WebhookDeliveryView } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPrivateAddress } from '../src/delivery-http/address-policy.js';
import { webhookSenderService } from '../src/index.js';
import {
  adminUser,
  FAST_ENV,
  publishFinished,
  Receiver,
  sleep,
  startSender,
  until,
} from './support.js';

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

/**
 * An internal service answering a secret (body, header and redirect target) to whoever calls it;
 * an ordinary user points a webhook at it and reads the deliveries with their own key.
 */
describe('webhook-sender: a tenant cannot read what an internal address answers', () => {
  const SECRET = 'internal-secret-7c41';
  let internal: http.Server;
  let calls = 0;
  let url: (path: string) => string;

  beforeAll(async () => {
    internal = http.createServer((req, res) => {
      calls++;
      req.resume();
      if (req.url === '/redirect')
        return void res.writeHead(302, { location: `http://10.0.0.1/${SECRET}` }).end(SECRET);
      res.writeHead(200, { 'x-internal': SECRET, 'content-type': 'text/plain' }).end(SECRET);
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    const { port } = internal.address() as AddressInfo;
    url = (path) => `http://127.0.0.1:${port}${path}`;
  });
  afterAll(async () => {
    internal.closeAllConnections();
    await new Promise((r) => internal.close(r));
  });

  /** A user with an ordinary readwrite key, made through the vault's admin routes. */
  async function tenant(server: TestServer) {
    const user = await server.call('POST', '/v1/users', { name: 'mallory' });
    const key = await server.call('POST', '/v1/apikeys', {
      name: 'mallory',
      userId: user.body.id,
      scope: 'readwrite',
    });
    return { userId: user.body.id as string, auth: { authorization: `Bearer ${key.body.key}` } };
  }

  async function settledAs(server: TestServer, auth: Record<string, string>, jobId: string) {
    return until(
      async () => {
        const res = await server.call(
          'GET',
          `/v1/webhooks/deliveries?jobId=${jobId}`,
          undefined,
          auth,
        );
        expect(res.status).toBe(200);
        const [d]: WebhookDeliveryView[] = res.body;
        return d && d.status !== 'pending' ? { d, text: JSON.stringify(res.body) } : null;
      },
      15_000,
      `delivery of ${jobId}`,
    );
  }

  it('with private targets refused (the cluster default) the internal address is never called, also on redeliver; nothing of its answer is shown', async () => {
    const server = await startTestServer([secretsVaultService, webhookSenderService], {
      ...FAST_ENV,
      WEBHOOK_ALLOW_PRIVATE: 'false',
      WEBHOOK_MAX_ATTEMPTS: '1',
    });
    try {
      const { userId, auth } = await tenant(server);
      const before = calls;
      const { id, event } = await publishFinished(server, userId, url('/'));
      const { d, text } = await settledAs(server, auth, event.jobId);
      expect(d).toMatchObject({ status: 'failed', attempts: [{ statusCode: null }] });
      expect(d.attempts[0].error).toMatch(/127\.0\.0\.1 is a private/);
      expect(text).not.toContain(SECRET);

      const again = await server.call(
        'POST',
        `/v1/webhooks/deliveries/${id}/redeliver`,
        undefined,
        auth,
      );
      expect(again.status).toBe(200);
      expect(JSON.stringify(again.body)).not.toContain(SECRET);
      const after = await until(async () => {
        const s = await settledAs(server, auth, event.jobId);
        return s.d.attemptCount === 2 ? s : null;
      });
      expect(after.d.attempts[1].error).toMatch(/private/);
      expect(after.text).not.toContain(SECRET);
      expect(calls).toBe(before);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('with private targets allowed (the standalone default), only the status is recorded: no body, header or redirect target', async () => {
    const server = await startSender({ WEBHOOK_MAX_ATTEMPTS: '1' });
    try {
      const { userId, auth } = await tenant(server);
      const ok = await publishFinished(server, userId, url('/'));
      const redirect = await publishFinished(server, userId, url('/redirect'));
      const delivered = await settledAs(server, auth, ok.event.jobId);
      expect(delivered.d).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 200 }] });
      expect(delivered.text).not.toContain(SECRET);
      const redirected = await settledAs(server, auth, redirect.event.jobId);
      expect(redirected.d).toMatchObject({ status: 'failed', attempts: [{ statusCode: 302 }] });
      expect(redirected.text).not.toContain(SECRET);

      const before = calls;
      const again = await server.call(
        'POST',
        `/v1/webhooks/deliveries/${ok.id}/redeliver`,
        undefined,
        auth,
      );
      expect(again.status).toBe(200);
      expect(JSON.stringify(again.body)).not.toContain(SECRET);
      const after = await until(async () => {
        const s = await settledAs(server, auth, ok.event.jobId);
        return s.d.attemptCount === 2 && s.d.status === 'delivered' ? s : null;
      });
      expect(after.text).not.toContain(SECRET);
      expect(calls).toBe(before + 1);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
