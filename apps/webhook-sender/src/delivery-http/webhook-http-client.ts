import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { WebhookSettings } from '../settings.js';
import { isPrivateAddress } from './address-policy.js';

/** What one attempt did, as recorded. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** Refused before any byte was sent (bad URL, private address): retrying cannot help... but is harmless. */
export class WebhookTargetRefused extends Error {
  readonly code = 'WEBHOOK_TARGET_REFUSED';
}

const USER_AGENT = 'Runplane-Webhooks/1';

/**
 * POSTs webhooks with undici. Safety (SSRF): http/https only; redirects are never followed (a 3xx
 * is a failed attempt); unless private targets are allowed, the host is checked AFTER DNS
 * resolution and the connection goes to exactly the addresses that were checked (the agent's own
 * `lookup`, so a second resolution cannot swap in another address: no DNS rebinding); IP literals
 * are checked directly; at most `maxResponseBytes` of an answer are read; every attempt is bounded
 * by one timeout covering connect, answer and body.
 */
@Injectable()
export class WebhookHttpClient implements OnApplicationShutdown {
  private readonly agent: Agent;

  constructor(private readonly settings: WebhookSettings) {
    this.agent = new Agent({
      // Per origin; the dispatcher's per-host cap keeps requests from queueing here.
      connections: settings.perHostConcurrency,
      keepAliveTimeout: 4000,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      connect: {
        timeout: settings.timeoutMs,
        ...(settings.allowPrivate ? {} : { lookup: guardedLookup }),
      },
    });
  }

  /** After the dispatcher's attempts in flight have finished (its onModuleDestroy waits for them). */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.close().catch(() => {});
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = this.checkTarget(url);
    } catch (err) {
      return {
        ok: false,
        statusCode: null,
        latencyMs: elapsed(),
        error: describe(err),
      };
    }
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const res = await request(target, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
      });
      // Only the status is recorded: neither the answer's body nor its headers (a redirect's
      // Location) are shown to the tenant, so a webhook cannot read what an address answers.
      await drain(res.body, this.settings.maxResponseBytes);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const redirect =
        res.statusCode >= 300 && res.statusCode < 400 ? ', redirect not followed' : '';
      return {
        ok,
        statusCode: res.statusCode,
        latencyMs: elapsed(),
        error: ok ? null : `receiver answered ${res.statusCode}${redirect}`,
      };
    } catch (err) {
      const timedOut = signal.aborted;
      return {
        ok: false,
        statusCode: null,
        latencyMs: elapsed(),
        error: timedOut ? `timed out after ${this.settings.timeoutMs} ms` : describe(err),
      };
    }
  }

  /** Scheme and, for IP literals, the address (names are checked by `guardedLookup` when connecting). */
  private checkTarget(url: string): URL {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new WebhookTargetRefused(`invalid webhook URL`);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      throw new WebhookTargetRefused(
        `refused: only http and https webhooks are sent (got ${target.protocol})`,
      );
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (!this.settings.allowPrivate && isIP(host) && isPrivateAddress(host)) {
      throw new WebhookTargetRefused(
        `refused: ${host} is a private, loopback or link-local address (WEBHOOK_ALLOW_PRIVATE is off)`,
      );
    }
    return target;
  }
}

/** Resolves like the default lookup, then refuses the connection if any address is not public. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad || addresses.length === 0) {
      const refusal = new WebhookTargetRefused(
        `refused: ${hostname} resolves to ${bad ? `${bad.address}, a private, loopback or link-local address` : 'no address'} (WEBHOOK_ALLOW_PRIVATE is off)`,
      );
      return callback(refusal as NodeJS.ErrnoException, '', 0);
    }
    if (options.all)
      (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  });
};

/** Reads at most `max` bytes of the body, dropping them (and the rest), so the connection is reusable. */
async function drain(
  body: AsyncIterable<Buffer> & { destroy(): void },
  max: number,
): Promise<void> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size >= max) {
      body.destroy();
      break;
    }
  }
}

function describe(err: unknown): string {
  let e = err as { message?: string; code?: string; cause?: unknown } | undefined;
  // undici wraps connection errors: the innermost cause says what happened (refused, ECONNREFUSED ...).
  while (e?.cause && typeof e.cause === 'object') e = e.cause as typeof e;
  const message = e?.message ?? String(err);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
