// End to end: the real standalone server (node packages/cli/bin/runplane.js start, from dist) runs a
// job on a real worker with a webhook, and its one /metrics shows every service's part: HTTP,
// bus, queue, jobs, workers, webhooks, process. Needs the build: `npx turbo run build` first.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { metricsAllowList } from '../src/metrics/allow-list.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'packages/cli/bin/runplane.js');
const WORKER = path.join(ROOT, 'examples/worker-echo/worker.mjs');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** GET from a chosen local address (the allow-list looks at the peer address). */
function getFrom(
  localAddress: string,
  url: string,
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }),
        );
      })
      .on('error', reject);
  });
}

/** Prometheus text → samples `{name, labels, value}`. */
function parse(
  text: string,
): Array<{ name: string; labels: Record<string, string>; value: number }> {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line)!;
      const labels = Object.fromEntries(
        [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
      );
      return { name: m[1], labels, value: Number(m[3]) };
    });
}

let server: ChildProcess;
let output = '';
let base = '';
const apiKey = randomBytes(24).toString('hex');
let receiver: http.Server;
const hooks: string[] = [];

async function call(method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      hooks.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(OTEL_|RUNPLANE_|DATABASE_URL|NATS_URL$|PORT$|HOST$|LOG_LEVEL$|NODE_ENV$)/.test(k))
      env[k] = v;
  // Scrapes are allowed from 127.0.0.2 only: this test's plain requests (from 127.0.0.1) must be refused.
  Object.assign(env, {
    PORT: String(port),
    HOST: '0.0.0.0',
    RUNPLANE_API_KEY: apiKey,
    RUNPLANE_DATA_DIR: 'memory',
    LOG_LEVEL: 'warn',
    RUNPLANE_METRICS_ALLOW: '127.0.0.2/32',
  });
  server = spawn(process.execPath, [CLI, 'start'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  server.stderr!.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (server.exitCode !== null || Date.now() > deadline)
      throw new Error(`server not ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 90_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  await new Promise((r) => receiver?.close(r));
});

describe('/metrics in standalone mode', () => {
  it('is refused to peers outside RUNPLANE_METRICS_ALLOW, with a JSON error', async () => {
    const res = await getFrom('127.0.0.1', `${base}/metrics`);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ status: 403, code: 'METRICS_FORBIDDEN' });
  });

  it('shows HTTP, bus, queue, job, worker, webhook and process metrics after a job ran with a webhook', async () => {
    const template = await call('POST', '/v1/templates', {
      name: `metrics-${randomBytes(3).toString('hex')}`,
      imageName: 'example/echo:1',
      isServerless: true,
      dockerStartCmd: [process.execPath, WORKER],
    });
    expect(template.status).toBe(200);
    const endpoint = await call('POST', '/v1/endpoints', {
      name: 'metrics',
      templateId: template.body.id,
      workersMin: 0,
      workersMax: 1,
    });
    expect(endpoint.status).toBe(200);
    const id = endpoint.body.id as string;
    const job = await call('POST', `/v2/${id}/runsync?wait=60000`, {
      input: { echo: 'hi' },
      webhook: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`,
    });
    expect(job.body).toMatchObject({ status: 'COMPLETED', output: 'hi' });
    for (let i = 0; i < 100 && hooks.length === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(hooks.length).toBe(1);

    const res = await getFrom('127.0.0.2', `${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parse(res.body);
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples
        .filter(
          (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        )
        .reduce((sum, s) => sum + s.value, 0);

    // HTTP by route template, never the raw URL (the endpoint id is not in the label).
    expect(
      value('runplane_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v2/:endpointId/runsync',
        status_code: '200',
      }),
    ).toBe(1);
    expect(
      samples.some(
        (s) => s.name.startsWith('runplane_http') && JSON.stringify(s.labels).includes(id),
      ),
    ).toBe(false);
    // Bus: the runsync RPC on both sides, the webhook event consumed, consumer lag present.
    expect(
      value('runplane_bus_request_duration_seconds_count', {
        subject: 'runplane.rpc.scheduler.jobs.run-sync',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      value('runplane_bus_handler_duration_seconds_count', {
        subject: 'runplane.rpc.scheduler.jobs.run-sync',
        kind: 'rpc',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      value('runplane_bus_handler_duration_seconds_count', {
        subject: 'runplane.evt.job.finished.v1',
        kind: 'event',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      samples.find(
        (s) => s.name === 'runplane_bus_consumer_pending' && s.labels.group === 'webhook-sender',
      )?.value,
    ).toBe(0);
    // Jobs: accepted, taken (queue delay), finished (execution time and outcome).
    expect(value('runplane_jobs_submitted_total')).toBe(1);
    expect(value('runplane_job_queue_delay_seconds_count')).toBe(1);
    expect(value('runplane_job_execution_seconds_count', { status: 'COMPLETED' })).toBe(1);
    expect(value('runplane_jobs_finished_total', { status: 'COMPLETED' })).toBe(1);
    // Queue and workers per endpoint, read at scrape time.
    expect(
      samples.find((s) => s.name === 'runplane_queue_depth' && s.labels.endpoint === id)?.value,
    ).toBe(0);
    expect(
      samples.find(
        (s) => s.name === 'runplane_queue_oldest_job_age_seconds' && s.labels.endpoint === id,
      )?.value,
    ).toBe(0);
    expect(value('runplane_workers', { endpoint: id })).toBe(1);
    // Webhooks: one successful attempt, one delivery.
    expect(value('runplane_webhook_attempt_duration_seconds_count', { outcome: 'success' })).toBe(
      1,
    );
    expect(value('runplane_webhook_deliveries_total', { result: 'delivered' })).toBe(1);
    // Process metrics.
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  }, 90_000);
});

describe('RUNPLANE_METRICS_ALLOW', () => {
  it('matches addresses and ranges, IPv4 and IPv6, and IPv4-mapped peers', () => {
    const allowed = metricsAllowList('127.0.0.0/8, 10.1.2.3, fc00::/7');
    expect(['127.0.0.1', '::ffff:127.0.0.5', '10.1.2.3', 'fd00::1'].map(allowed)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['10.1.2.4', '192.168.1.1', '::1', '2001:db8::1', undefined].map(allowed)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(() => metricsAllowList('10.0.0.0/33')).toThrow(/not an address or CIDR range/);
    expect(metricsAllowList('')('127.0.0.1')).toBe(false);
  });
});
