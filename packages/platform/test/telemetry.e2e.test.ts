// End to end: the real standalone server (node packages/cli/bin/runplane.js start, from dist) sends
// its traces to a tiny OTLP/HTTP receiver. Needs the build: `npx turbo run build` first.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'packages/cli/bin/runplane.js');
const SUBMIT = 'runplane.rpc.scheduler.jobs.submit';
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

// ---- a minimal OTLP/HTTP receiver -----------------------------------------------------------

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans: Array<{ scope?: { name: string }; spans: OtlpSpan[] }>;
  }>;
}
interface Span extends OtlpSpan {
  scope: string;
  service?: string;
}

interface Receiver {
  url: string;
  requests: Array<{ method: string; path: string; contentType?: string; body: string }>;
  spans(): Span[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0],
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () =>
      requests
        .filter((r) => r.method === 'POST' && r.path === '/v1/traces')
        .flatMap((r) => {
          expect(r.contentType).toMatch(/json/); // OTEL_EXPORTER_OTLP_PROTOCOL=http/json
          const body = JSON.parse(r.body) as OtlpExport;
          return body.resourceSpans.flatMap((rs) => {
            const service = attr(rs.resource?.attributes, 'service.name');
            return rs.scopeSpans.flatMap((ss) =>
              ss.spans.map((s) => ({
                ...s,
                scope: ss.scope?.name ?? '',
                service: typeof service === 'string' ? service : undefined,
              })),
            );
          });
        }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function attr(
  attributes: OtlpAttribute[] | undefined,
  key: string,
): string | number | boolean | undefined {
  const v = attributes?.find((a) => a.key === key)?.value;
  return (
    v?.stringValue ??
    (v?.intValue !== undefined ? Number(v.intValue) : undefined) ??
    v?.boolValue ??
    v?.doubleValue
  );
}

// ---- the server as a child process ----------------------------------------------------------

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

/** Loaded with --import before the CLI: on exit, reports whether the OpenTelemetry SDK was ever loaded. */
const PROBE = `
import fs from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const loaded = (needle) => Object.keys(require.cache).some((k) => k.includes(needle));
  const api = globalThis[Symbol.for('opentelemetry.js.api.1')] ?? {};
  const report = { sdkLoaded: loaded('/@opentelemetry/sdk-node/'), hookLibLoaded: loaded('/import-in-the-middle/'),
    apiGlobals: ['trace', 'context', 'propagation'].filter((k) => api[k] !== undefined),
    handle: globalThis[Symbol.for('runplane.telemetry.sdk')] !== undefined };
  fs.writeSync(2, '\\nOTEL-PROBE ' + JSON.stringify(report) + '\\n');
});
`;

interface ProbeReport {
  sdkLoaded: boolean;
  hookLibLoaded: boolean;
  apiGlobals: string[];
  handle: boolean;
}
interface Scenario {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  submitStatus: number;
  submitBody: unknown;
  probe: ProbeReport;
  receiver: Receiver;
  output: string;
  /** What must never appear in a span: the API key (sent as ?api_key= too) and a secret's value. */
  confidential: string[];
  secretStatus: number;
}

const dirs: string[] = [];

/** Starts the server, submits one job, stops it with SIGTERM and waits for it to exit. */
async function runScenario(otel: Record<string, string>): Promise<Scenario> {
  const receiver = await startReceiver();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-otel-'));
  dirs.push(dir);
  const probeFile = path.join(dir, 'probe.mjs');
  fs.writeFileSync(probeFile, PROBE);
  const port = await freePort();
  const apiKey = randomBytes(24).toString('hex');

  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(OTEL_|RUNPLANE_|DATABASE_URL|NATS_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(k)) env[k] = v;
  }
  Object.assign(env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    RUNPLANE_API_KEY: apiKey,
    RUNPLANE_DATA_DIR: path.join(dir, 'data'),
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(
      Object.entries(otel).map(([k, v]) => [k, v.replace('{receiver}', receiver.url)]),
    ),
  });

  const child = spawn(process.execPath, ['--import', probeFile, CLI, 'start'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) =>
      resolve({ code, signal }),
    ),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });

  try {
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 120_000; // generous: a loaded CI machine starts slowly
    for (;;) {
      if (done)
        throw new Error(
          `server exited before it was ready (${JSON.stringify(await exited)}):\n${output}`,
        );
      if (Date.now() > deadline) throw new Error(`server not ready within 120 s:\n${output}`);
      const ready = await fetch(`${base}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await fetch(`${base}/v2/test-ep/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { x: 1 } }),
    });
    const submitBody: unknown = await res.json();
    // A GraphQL call with the key in the query string, creating a secret.
    const secretValue = `otel-secret-${randomBytes(12).toString('hex')}`;
    const secret = await fetch(`${base}/graphql?api_key=${apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `mutation { secretCreate(input: {name: "otel_${randomBytes(3).toString('hex')}", value: "${secretValue}"}) { id } }`,
      }),
    });
    await secret.text();

    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const { code, signal } = await exited;
    clearTimeout(timer);
    const line = output.split('\n').find((l) => l.startsWith('OTEL-PROBE '));
    if (!line) throw new Error(`no probe report from the server:\n${output}`);
    return {
      exitCode: code,
      signal,
      submitStatus: res.status,
      submitBody,
      probe: JSON.parse(line.slice('OTEL-PROBE '.length)) as ProbeReport,
      receiver,
      output,
      confidential: [apiKey, secretValue],
      secretStatus: secret.status,
    };
  } catch (err) {
    if (!done) child.kill('SIGKILL');
    await receiver.close();
    throw err;
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
async function outcome<T>(p: Promise<Settled<T>>): Promise<T> {
  const r = await p;
  if (!r.ok) throw r.error;
  return r.value;
}

/**
 * The scheduler handled the submission: queued (200), or refused because no endpoint `test-ep`
 * exists (404 ENDPOINT_NOT_FOUND, once endpoints must be created first). Either way the request
 * went HTTP → queue-api → bus → scheduler → database, which is what the trace must show.
 */
function expectSubmitHandled(s: Scenario): void {
  if (s.submitStatus === 200)
    expect(s.submitBody).toEqual(expect.objectContaining({ status: 'IN_QUEUE' }));
  else
    expect({ status: s.submitStatus, body: s.submitBody }).toEqual({
      status: 404,
      body: expect.objectContaining({ code: 'ENDPOINT_NOT_FOUND' }),
    });
}

/** The trace of one POST /v2/{id}/run, from its bus client span for the scheduler's jobs.submit. */
function assertTrace(trace: Span[], client: Span): void {
  const byId = new Map(trace.map((x) => [x.spanId, x]));
  const parentOf = (x: Span) => (x.parentSpanId ? byId.get(x.parentSpanId) : undefined);

  // HTTP server span (instrumentation-http), the root, renamed with the route by the interceptor.
  const httpSpan = trace.find(
    (x) => x.kind === KIND.SERVER && x.scope === '@opentelemetry/instrumentation-http',
  );
  expect({
    name: httpSpan?.name,
    parent: httpSpan?.parentSpanId || undefined,
    route: attr(httpSpan?.attributes, 'http.route'),
  }).toEqual({ name: 'POST /v2/:endpointId/run', parent: undefined, route: '/v2/:endpointId/run' });

  // Nest handler span under it, and the bus client span under the handler.
  const handler = trace.find((x) => x.name === 'QueueController.run');
  expect(
    handler && {
      kind: handler.kind,
      parent: handler.parentSpanId,
      route: attr(handler.attributes, 'http.route'),
    },
  ).toEqual({ kind: KIND.INTERNAL, parent: httpSpan!.spanId, route: '/v2/:endpointId/run' });
  expect(client.parentSpanId).toBe(handler!.spanId);

  // The scheduler's bus server span answering it, then its Nest handler span.
  const busServer = trace.find(
    (x) =>
      x.kind === KIND.SERVER &&
      x.scope === '@runplane/bus' &&
      attr(x.attributes, 'messaging.destination.name') === SUBMIT,
  );
  expect(busServer?.parentSpanId).toBe(client.spanId);
  const schedulerHandler = trace.find((x) => x.name === 'JobsBusController.submit');
  expect(
    schedulerHandler && {
      parent: schedulerHandler.parentSpanId,
      subject: attr(schedulerHandler.attributes, 'messaging.destination.name'),
    },
  ).toEqual({ parent: busServer!.spanId, subject: SUBMIT });

  // Prisma spans (operation, SQL queries) below the scheduler's handling of the message.
  const underBusServer = (x: Span) => {
    for (let p = parentOf(x); p; p = parentOf(p)) if (p.spanId === busServer!.spanId) return true;
    return false;
  };
  const prisma = trace.filter((x) => x.name.startsWith('prisma:') && underBusServer(x));
  expect(prisma.map((x) => x.name)).toEqual(
    expect.arrayContaining(['prisma:client:operation', 'prisma:client:db_query']),
  );
  expect(prisma.find((x) => x.name === 'prisma:client:operation')?.parentSpanId).toBe(
    schedulerHandler!.spanId,
  );
}

// ---- the tests ------------------------------------------------------------------------------

describe('OpenTelemetry tracing (standalone server)', () => {
  // Both servers start at once: the suite takes about as long as one start.
  let traced: Promise<Settled<Scenario>>;
  let untraced: Promise<Settled<Scenario>>;

  beforeAll(() => {
    for (const f of ['packages/cli/dist/main.js', 'packages/platform/dist/telemetry/register.js']) {
      if (!fs.existsSync(path.join(ROOT, f)))
        throw new Error(`${f} is missing: build first (cd ${ROOT} && npx turbo run build)`);
    }
    traced = settle(
      runScenario({
        OTEL_EXPORTER_OTLP_ENDPOINT: '{receiver}',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    );
    untraced = settle(
      runScenario({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '200' }),
    );
  });

  afterAll(async () => {
    for (const p of [traced, untraced]) {
      const r = await p;
      if (r?.ok) await r.value.receiver.close();
    }
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('exports one trace from the HTTP request through the bus to Prisma, and flushes on SIGTERM', async () => {
    const s = await outcome(traced);
    expectSubmitHandled(s);
    expect({ code: s.exitCode, signal: s.signal }).toEqual({ code: 0, signal: null });
    expect(s.probe).toEqual({
      sdkLoaded: true,
      hookLibLoaded: true,
      apiGlobals: ['trace', 'context', 'propagation'],
      handle: true,
    });

    const spans = s.receiver.spans();
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((x) => x.service))).toEqual(new Set(['runplane']));
    // Health probes are not traced (the test polled /readyz until the server was ready).
    expect(
      spans.filter((x) =>
        x.attributes?.some((a) => String(a.value.stringValue ?? '').includes('/readyz')),
      ),
    ).toEqual([]);

    // Neither the API key (also sent as ?api_key=) nor a secret's value is in any exported span.
    expect(s.secretStatus).toBe(200);
    expect(spans.some((x) => attr(x.attributes, 'url.query') === 'api_key=REDACTED')).toBe(true);
    for (const r of s.receiver.requests)
      for (const c of s.confidential) expect(r.body.includes(c)).toBe(false);

    const describeTrace = (traceId: string) =>
      spans
        .filter((x) => x.traceId === traceId)
        .map((x) => `${x.kind} ${x.scope} ${x.name} ${x.spanId}<-${x.parentSpanId ?? '-'}`)
        .join('\n');

    // The bus client span of the scheduler call names the trace.
    const client = spans.find(
      (x) => x.kind === KIND.CLIENT && attr(x.attributes, 'messaging.destination.name') === SUBMIT,
    );
    if (!client)
      throw new Error(
        `no client span for ${SUBMIT}; spans:\n${spans.map((x) => x.name).join('\n')}`,
      );
    const trace = spans.filter((x) => x.traceId === client.traceId);
    try {
      assertTrace(trace, client);
    } catch (err) {
      (err as Error).message +=
        `\n\nthe trace (kind scope name id<-parent):\n${describeTrace(client.traceId)}`;
      throw err;
    }
  }, 180_000);

  it('exports nothing and loads no SDK without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const s = await outcome(untraced);
    expectSubmitHandled(s);
    expect({ code: s.exitCode, signal: s.signal }).toEqual({ code: 0, signal: null });
    expect(s.probe).toEqual({
      sdkLoaded: false,
      hookLibLoaded: false,
      apiGlobals: [],
      handle: false,
    });
    expect(s.receiver.requests).toEqual([]);
  }, 180_000);
});
