import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JobEvents, VaultRpc, type JobFinishedEvent } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { webhookSenderService } from '../src/index.js';

/** Short delays so retries happen in a test's time. */
export const FAST_ENV = {
  WEBHOOK_RETRY_DELAY_MS: '200',
  WEBHOOK_TIMEOUT_MS: '1500',
  WEBHOOK_POLL_MS: '100',
};

/** A sender whose receivers are on this machine: private targets allowed unless `env` says otherwise. */
export const startSender = (env: Record<string, string> = {}) =>
  startTestServer([secretsVaultService, webhookSenderService], {
    ...FAST_ENV,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...env,
  });

/** The user of the server's admin key (deliveries are scoped to it). */
export async function adminUser(server: TestServer, key = server.apiKey): Promise<string> {
  const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
    keyHash: createHash('sha256').update(key).digest('hex'),
  });
  return principal!.userId;
}

let seq = 0;
/** Publishes a job.finished event as the scheduler's outbox relay would; returns its id (the webhook-id). */
export async function publishFinished(
  server: TestServer,
  ownerId: string,
  url: string,
  extra: Partial<JobFinishedEvent> = {},
): Promise<{ id: string; event: JobFinishedEvent }> {
  const jobId = `job-${Date.now().toString(36)}-${++seq}`;
  const event: JobFinishedEvent = {
    jobId,
    endpointId: 'ep-1',
    ownerId,
    status: 'COMPLETED',
    webhook: url,
    body: JSON.stringify({
      id: jobId,
      status: 'COMPLETED',
      output: { z: 1, a: 'é \u0000' },
      retries: 0,
      input: { n: seq },
      webhook: url,
    }),
    ...extra,
  };
  const id = `msg_${jobId}`;
  await server.bus.publish(JobEvents.finished, event, { id });
  return { id, event };
}

export interface Received {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A local webhook receiver. `plan(path, [500, 200])` answers the next calls to `path` with those
 * statuses (then 200); `hold(path)` keeps calls to it open until `release()`.
 */
export class Receiver {
  readonly calls: Received[] = [];
  private readonly plans = new Map<string, Array<number | 'hang' | 'redirect' | 'huge'>>();
  private readonly held: Array<() => void> = [];
  private active = new Map<string, number>();
  readonly maxActive = new Map<string, number>();
  private server!: http.Server;
  port = 0;

  static async start(host = '127.0.0.1'): Promise<Receiver> {
    const r = new Receiver();
    r.server = http.createServer((req, res) => r.handle(req, res));
    await new Promise<void>((resolve) => r.server.listen(0, host, resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  plan(path: string, answers: Array<number | 'hang' | 'redirect' | 'huge'>): void {
    this.plans.set(path, [...answers]);
  }

  received(path: string): Received[] {
    return this.calls.filter((c) => c.path === path);
  }

  async waitFor(path: string, n: number, timeoutMs = 15_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received(path).length < n) {
      if (Date.now() > deadline)
        throw new Error(`expected ${n} calls to ${path}, got ${this.received(path).length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.received(path);
  }

  release(): void {
    for (const r of this.held.splice(0)) r();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.calls.push({
        path,
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const n = (this.active.get(path) ?? 0) + 1;
      this.active.set(path, n);
      this.maxActive.set(path, Math.max(this.maxActive.get(path) ?? 0, n));
      const done = () => this.active.set(path, (this.active.get(path) ?? 1) - 1);
      res.on('close', done);
      const answer = this.plans.get(path)?.shift() ?? 200;
      if (answer === 'hang') return void this.held.push(() => res.end('late'));
      if (answer === 'redirect')
        return void res.writeHead(302, { location: this.url('/redirected') }).end();
      if (answer === 'huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const block = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024 && res.write(block)) sent += block.length;
          if (sent < 8 * 1024 * 1024)
            res.once('drain', () => {
              sent += block.length;
              pump();
            });
          else res.end();
        };
        return pump();
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(`answer ${answer} for ${path}`);
    });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
