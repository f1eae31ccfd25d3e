import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  /** Path and query exactly as requested. */
  url: string;
  route: 'job-take' | 'job-take-batch' | 'job-done' | 'job-stream' | 'job-stop' | 'ping' | 'other';
  jobId?: string;
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: any;
  query: URLSearchParams;
}

type TakeResponder = (res: ServerResponse) => void;

/**
 * The worker routes of a Runplane server, in a test: job-take / job-take-batch / job-stop
 * long-poll (answered as soon as there is work, 204 after `holdMs`), job-done / job-stream / ping
 * are recorded. Every request is kept for assertions.
 */
export class FakeRunplane {
  readonly requests: Recorded[] = [];
  holdMs = 5000;
  /** Replaces the next job-take answer (e.g. a wrong content type). */
  nextTake?: TakeResponder;
  private server!: Server;
  private base = '';
  private queue: Array<Record<string, unknown>> = [];
  private takers: Array<{ batch: number | null; res: ServerResponse; timer: NodeJS.Timeout }> = [];
  private toStop: string[] = [];
  private stoppers: Array<{ res: ServerResponse; timer: NodeJS.Timeout }> = [];
  private listeners = new Set<() => void>();
  private postFailures = new Map<string, number[]>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const t of this.takers) {
      clearTimeout(t.timer);
      t.res.writeHead(204).end();
    }
    for (const s of this.stoppers) {
      clearTimeout(s.timer);
      s.res.writeHead(204).end();
    }
    this.takers = [];
    this.stoppers = [];
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /**
   * The worker env as Runplane sets it, written with the placeholders runpod-python
   * substitutes: `$ID` (worker id in job-take, job id in job-done / job-stream) and `$RUNPOD_POD_ID`.
   */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const ep = `${this.base}/v2/ep-1`;
    return {
      RUNPOD_POD_ID: 'wk-1',
      RUNPOD_AI_API_KEY: 'raw-worker-key',
      RUNPOD_WEBHOOK_GET_JOB: `${ep}/job-take/$ID?gpu=NVIDIA+RTX+4090`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${ep}/job-done/$RUNPOD_POD_ID/$ID?gpu=NVIDIA+RTX+4090`,
      RUNPOD_WEBHOOK_POST_STREAM: `${ep}/job-stream/$RUNPOD_POD_ID/$ID?gpu=NVIDIA+RTX+4090`,
      RUNPOD_WEBHOOK_PING: `${ep}/ping/$RUNPOD_POD_ID?gpu=NVIDIA+RTX+4090`,
      RUNPOD_PING_INTERVAL: '10000',
      RUNPOD_LOG_LEVEL: 'ERROR',
      ...extra,
    };
  }

  /** Queues jobs; a waiting job-take gets them at once. */
  push(...jobs: Array<Record<string, unknown>>): void {
    this.queue.push(...jobs);
    while (this.takers.length && this.queue.length) {
      const taker = this.takers.shift()!;
      clearTimeout(taker.timer);
      this.answerTake(taker.batch, taker.res);
    }
  }

  /** Sends job ids on job-stop (at once if the worker is polling). */
  stop(...ids: string[]): void {
    this.toStop.push(...ids);
    const waiter = this.stoppers.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      this.answerStop(waiter.res);
    }
  }

  /** Answers the next job-done posts of `jobId` with these statuses (then 200 again). */
  failPosts(jobId: string, ...statuses: number[]): void {
    this.postFailures.set(jobId, statuses);
  }

  of(route: Recorded['route']): Recorded[] {
    return this.requests.filter((r) => r.route === route);
  }

  /** Final job-done posts (not progress) of a job. */
  finals(jobId: string): Recorded[] {
    return this.of('job-done').filter((r) => r.jobId === jobId && r.body?.status !== 'IN_PROGRESS');
  }

  /** Resolves once `check` holds (re-checked after every request). */
  until<T>(
    check: () => T | undefined | false | null,
    what: string,
    timeoutMs = 10_000,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const probe = () => {
        const value = check();
        if (!value) return false;
        this.listeners.delete(probe);
        clearTimeout(timer);
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(probe);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      if (!probe()) this.listeners.add(probe);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url!, this.base);
    const parts = url.pathname.split('/'); // ['', 'v2', 'ep-1', route, workerId, jobId?]
    const route = (
      ['job-take', 'job-take-batch', 'job-done', 'job-stream', 'job-stop', 'ping'].includes(
        parts[3],
      )
        ? parts[3]
        : 'other'
    ) as Recorded['route'];
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    this.requests.push({
      method: req.method!,
      url: req.url!,
      route,
      jobId: parts[5],
      headers: req.headers,
      rawBody,
      body,
      query: url.searchParams,
    });
    for (const listener of [...this.listeners]) listener();

    if (route === 'job-take' || route === 'job-take-batch') {
      const batch = route === 'job-take-batch' ? Number(url.searchParams.get('batch_size')) : null;
      if (this.nextTake) {
        const respond = this.nextTake;
        this.nextTake = undefined;
        return respond(res);
      }
      if (this.queue.length) return this.answerTake(batch, res);
      const timer = setTimeout(() => {
        this.takers = this.takers.filter((t) => t.res !== res);
        res.writeHead(204).end();
      }, this.holdMs);
      this.takers.push({ batch, res, timer });
      res.on('close', () => {
        clearTimeout(timer);
        this.takers = this.takers.filter((t) => t.res !== res);
      });
      return;
    }
    if (route === 'job-stop') {
      if (this.toStop.length) return this.answerStop(res);
      const timer = setTimeout(() => {
        this.stoppers = this.stoppers.filter((s) => s.res !== res);
        res.writeHead(204).end();
      }, this.holdMs);
      this.stoppers.push({ res, timer });
      res.on('close', () => {
        clearTimeout(timer);
        this.stoppers = this.stoppers.filter((s) => s.res !== res);
      });
      return;
    }
    const failure =
      route === 'job-done' && parts[5] ? this.postFailures.get(parts[5])?.shift() : undefined;
    if (failure)
      return void res
        .writeHead(failure, { 'content-type': 'application/json' })
        .end('{"error":"injected"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  private answerTake(batch: number | null, res: ServerResponse): void {
    const jobs = this.queue.splice(0, batch ?? 1);
    res
      .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify(batch === null ? jobs[0] : jobs));
  }

  private answerStop(res: ServerResponse): void {
    const ids = this.toStop.splice(0);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jobsToStop: ids }));
  }
}
