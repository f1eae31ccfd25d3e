import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.js';

const body = JSON.stringify({
  id: 'job-1',
  status: 'COMPLETED',
  output: { text: 'héllo \u0000' },
  input: { a: 1 },
  webhook: 'https://x.test/h',
});

describe('Standard Webhooks signing', () => {
  it('signs so that the reference library verifies it, and verifies what the reference library signs', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signWebhook(secret, 'msg_1', body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));

    const ts = new Date();
    const theirs = new Webhook(secret).sign('msg_2', ts, body);
    const parsed = verifyWebhook(secret, body, {
      'Webhook-Id': 'msg_2',
      'Webhook-Timestamp': String(Math.floor(ts.getTime() / 1000)),
      'Webhook-Signature': theirs,
    });
    expect(parsed).toEqual(JSON.parse(body));
  });

  it('accepts Fetch Headers, Buffers and a list of signatures with one valid entry (secret rotation)', () => {
    const secret = generateWebhookSecret();
    const old = generateWebhookSecret();
    const h = signWebhook(secret, 'msg_3', body);
    const stale = signWebhook(old, 'msg_3', body, Number(h['webhook-timestamp']))[
      'webhook-signature'
    ];
    const headers = new Headers({
      ...h,
      'webhook-signature': `${stale} v1a,bm9wZQ== ${h['webhook-signature']}`,
    });
    expect(verifyWebhook(secret, Buffer.from(body), headers)).toEqual(JSON.parse(body));
  });

  it('rejects a wrong secret, a changed body or id, missing headers and stale or future timestamps', () => {
    const secret = generateWebhookSecret();
    const now = 1_800_000_000;
    const h = signWebhook(secret, 'msg_4', body, now);
    const verify =
      (b: string, headers: Record<string, string>, nowSeconds = now) =>
      () =>
        verifyWebhook(secret, b, headers, { nowSeconds });
    expect(verify(body, h)()).toEqual(JSON.parse(body));
    expect(() => verifyWebhook(generateWebhookSecret(), body, h, { nowSeconds: now })).toThrow(
      WebhookVerificationError,
    );
    expect(verify(body.replace('COMPLETED', 'FAILED'), h)).toThrow('no matching webhook signature');
    expect(verify(body, { ...h, 'webhook-id': 'msg_5' })).toThrow('no matching webhook signature');
    expect(
      verify(body, { 'webhook-id': 'msg_4', 'webhook-timestamp': h['webhook-timestamp'] }),
    ).toThrow('missing');
    expect(verify(body, h, now + 301)).toThrow('too old');
    expect(verify(body, h, now - 301)).toThrow('too new');
    expect(verify(body, { ...h, 'webhook-timestamp': '12abc' })).toThrow(
      'invalid webhook-timestamp',
    );
    expect(verify(body, { ...h, 'webhook-signature': 'v1,' })).toThrow('no matching');
  });
});
