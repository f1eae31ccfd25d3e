import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (symmetric `v1`, HMAC-SHA256), the scheme of Runplane's job webhooks
 *. Receivers import `verifyWebhook` to check a call; webhook-sender uses
 * `signWebhook`. The secret is `whsec_<base64>` as shown by `GET /v1/webhooks/secret`.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Reference libraries reject calls signed more than 5 minutes before or after now. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

// A type alias (not an interface) so it fits wherever a plain header record is expected.
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** A new signing secret: 32 random bytes as `whsec_<base64>` (Standard Webhooks allows 24 to 64). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  const raw = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  const key = Buffer.from(raw, 'base64');
  if (key.length === 0) throw new Error('webhook signing secret is empty or not base64');
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` */
export function webhookSignature(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const mac = createHmac('sha256', secretBytes(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt (`timestamp` in seconds; a new one per attempt, the id stays). */
export function signWebhook(
  secret: string,
  id: string,
  body: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): WebhookHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(secret, id, timestampSeconds, body),
  };
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export interface VerifyWebhookOptions {
  /** Seconds a timestamp may differ from now (default 300). */
  toleranceSeconds?: number;
  /** "Now" in seconds, for tests. */
  nowSeconds?: number;
}

/**
 * Checks a received webhook and returns its parsed JSON body. `body` must be the raw request body
 * exactly as received (re-serialised JSON would not match). `headers` may be any header map
 * (names are matched case-insensitively; Node's `req.headers`, a Fetch `Headers`, a plain object).
 * Throws `WebhookVerificationError` when a header is missing, the timestamp is too old or too new,
 * or no `v1` signature in the (space-separated) list matches; comparison is constant-time.
 */
export function verifyWebhook<T = unknown>(
  secret: string,
  body: string | Buffer,
  headers: Headers | Record<string, string | string[] | undefined>,
  options: VerifyWebhookOptions = {},
): T {
  const get = (name: string): string | undefined => {
    if (typeof (headers as Headers).get === 'function')
      return (headers as Headers).get(name) ?? undefined;
    for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(' ') : v;
    }
    return undefined;
  };
  const id = get('webhook-id');
  const timestamp = get('webhook-timestamp');
  const signatures = get('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'missing webhook-id, webhook-timestamp or webhook-signature header',
    );
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('invalid webhook-timestamp');
  const ts = Number(timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (ts < now - tolerance) throw new WebhookVerificationError('webhook-timestamp is too old');
  if (ts > now + tolerance) throw new WebhookVerificationError('webhook-timestamp is too new');
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const expected = Buffer.from(webhookSignature(secret, id, ts, text).slice(3), 'base64');
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected))
      return JSON.parse(text) as T;
  }
  throw new WebhookVerificationError('no matching webhook signature');
}
