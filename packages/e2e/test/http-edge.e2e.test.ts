import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import {
  ADMIN_KEY,
  killAll,
  provisionEndpoint,
  removeTempDir,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

// The HTTP edge of a standalone server, attacked the way a hostile client would: key guessing,
// one key under many spellings, slow uploads, many large bodies at once, and the bind address.

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One request on a fresh connection from `from` (a loopback address: each one is its own client). */
function request(
  base: string,
  method: string,
  path: string,
  options: { from?: string; key?: string; body?: unknown } = {},
): Promise<Answer> {
  const text = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent: false,
        localAddress: options.from,
        headers: {
          ...(options.key && { authorization: `Bearer ${options.key}` }),
          ...(text !== undefined && { 'content-type': 'application/json' }),
        },
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let body: unknown = raw;
          try {
            body = JSON.parse(raw);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(text);
  });
}

/** A raw connection that sends `head` (and maybe part of a body) and collects whatever comes back. */
function rawUpload(base: string, head: string, from?: string) {
  const { hostname, port } = new URL(base);
  const socket = net.connect({ host: hostname, port: Number(port), localAddress: from });
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('utf8')));
  socket.on('error', () => {}); // a reset is one way of being cut off
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  return { socket, closed, received: () => received };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Status line, headers and JSON body of a raw HTTP/1.1 answer. */
function parseRaw(text: string): Answer {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: http.IncomingHttpHeaders = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body: unknown = rest.join('\r\n\r\n');
  try {
    body = JSON.parse(body as string);
  } catch {
    /* not JSON (or chunked) */
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

const FAILURE_LIMIT = 5;
const MANAGEMENT_LIMIT = 6;
const REQUEST_TIMEOUT_MS = 2000;
const BODY_BUDGET = 1024 * 1024;

describe('HTTP edge of a standalone server (hostile clients)', () => {
  const workDir = tempDir('http-edge');
  let url: string;
  let endpoint: string;

  beforeAll(async () => {
    const server = startRunplane(
      'standalone-edge',
      ['start'],
      {
        RUNPLANE_DATA_DIR: 'memory',
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_AUTH_FAILURE_LIMIT: String(FAILURE_LIMIT),
        RUNPLANE_AUTH_FAILURE_WINDOW_S: '3600', // no window ends during the test
        RUNPLANE_MANAGEMENT_RATE_LIMIT: String(MANAGEMENT_LIMIT),
        RUNPLANE_MAX_INFLIGHT_BODY_BYTES: String(BODY_BUDGET),
      },
      workDir,
    );
    ({ url } = await server.waitForReady(120_000));
    endpoint = await provisionEndpoint(url, ADMIN_KEY, 'e2e-edge');
  }, 180_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 60_000);

  it('refuses an address that guesses keys with 429, in every service and in GraphQL; other addresses keep working', async () => {
    const guesser = '127.0.0.2';
    let attempts = 0;
    let last: Answer;
    do {
      last = await request(url, 'GET', '/v1/endpoints', {
        from: guesser,
        key: `rpk_guess${attempts}`,
      });
      attempts++;
      if (last.status !== 429) expect(last.status).toBe(401);
    } while (last.status !== 429 && attempts <= FAILURE_LIMIT + 1);
    expect(attempts).toBe(FAILURE_LIMIT + 1);
    expect(last.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // The same address is refused by the queue API and by GraphQL too, before any key is checked:
    // even the right key would not tell the guesser it was right.
    const queue = await request(url, 'POST', `/v2/${endpoint}/run`, {
      from: guesser,
      key: 'rpk_another-guess',
      body: { input: {} },
    });
    expect(queue).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    expect(queue.headers['retry-after']).toBeDefined();
    const graphql = await request(url, 'POST', '/graphql?api_key=rpk_graphql-guess', {
      from: guesser,
      body: { query: '{ myself { id } }' },
    });
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(graphql.headers['retry-after']).toBeDefined();
    expect(
      (await request(url, 'GET', '/v1/endpoints', { from: guesser, key: ADMIN_KEY })).status,
    ).toBe(429);

    // Another client address is not affected, and successes are never counted.
    for (let i = 0; i < FAILURE_LIMIT + 2; i++)
      expect(
        (await request(url, 'GET', `/v2/${endpoint}/health`, { from: '127.0.0.3', key: ADMIN_KEY }))
          .status,
      ).toBe(200);
  });

  it('counts the management limit per verified key: percent-encodings of one key share one budget', async () => {
    const created = await request(url, 'POST', '/v1/apikeys', {
      from: '127.0.0.4',
      key: ADMIN_KEY,
      body: { name: 'edge-encodings', scope: 'readwrite' },
    });
    expect(created.status).toBe(200);
    const key: string = created.body.key;
    const plain = key;
    const encoded = [...key]
      .map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
      .join('');
    const ask = (spelling: string) =>
      request(url, 'POST', `/graphql?api_key=${spelling}`, {
        from: '127.0.0.4',
        body: { query: '{ myself { id } }' },
      });

    // Spend the budget with one spelling; the other spelling is refused at once, as is the header.
    let spent = 0;
    for (let answer = await ask(plain); answer.status !== 429; answer = await ask(plain)) {
      expect(answer.status).toBe(200);
      expect(++spent).toBeLessThanOrEqual(10 * MANAGEMENT_LIMIT); // a 10-s window may roll over
    }
    const other = await ask(encoded);
    expect(other.status).toBe(429);
    expect(other.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    const rest = await request(url, 'GET', '/v1/endpoints', { from: '127.0.0.4', key });
    expect(rest).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
  });

  it('refuses bodies beyond the in-flight budget with 503 while small requests go through; nothing half-written', async () => {
    const from = '127.0.0.6';
    const queued = async () =>
      (await request(url, 'GET', `/v2/${endpoint}/health`, { from, key: ADMIN_KEY })).body.jobs
        .inQueue as number;
    const before = await queued();
    const pad = 'x'.repeat(600 * 1024);
    const body = JSON.stringify({ input: { pad } });
    const head = (length: string) =>
      `POST /v2/${endpoint}/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
      `Content-Type: application/json\r\n${length}\r\n\r\n`;
    // Two uploads of 600 KiB against a 1 MiB budget, both stalled after 1 KiB: one is refused.
    const uploads = [0, 1].map(() =>
      rawUpload(url, head(`Content-Length: ${body.length}`) + body.slice(0, 1024), from),
    );
    await until('one upload refused', () => uploads.some((u) => u.received().includes('\r\n\r\n')));
    const [refused, held] = uploads[0].received() ? uploads : [uploads[1], uploads[0]];
    const answer = parseRaw(refused.received());
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.body).toMatchObject({ status: 503, code: 'BODIES_IN_FLIGHT' });

    // A chunked upload is counted as it arrives and refused once it would go over.
    const chunked = rawUpload(url, head('Transfer-Encoding: chunked'), from);
    for (let i = 0; i < 8 && !chunked.received(); i++) {
      const piece = 'x'.repeat(64 * 1024);
      chunked.socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      await until(
        'the piece sent',
        () => chunked.socket.writableLength === 0 || !!chunked.received(),
      );
    }
    await until('the chunked upload refused', () => chunked.received().includes('\r\n\r\n'));
    expect(parseRaw(chunked.received()).status).toBe(503);

    // A small request fits beside the held upload.
    const small = await request(url, 'POST', `/v2/${endpoint}/run`, {
      from,
      key: ADMIN_KEY,
      body: { input: { small: true } },
    });
    expect(small.status).toBe(200);

    // The held upload completes; the refused ones left no job behind.
    held.socket.end(body.slice(1024));
    await until('the held upload answered', () => held.received().includes('"id"'));
    expect(parseRaw(held.received()).status).toBe(200);
    refused.socket.destroy();
    chunked.socket.destroy();
    expect(await queued()).toBe(before + 2);
  }, 120_000);
});

describe('standalone server with defaults for HOST, and short request timeouts', () => {
  const workDir = tempDir('bind');
  let url: string;
  let endpoint: string;

  beforeAll(async () => {
    const server = startRunplane(
      'standalone-bind',
      ['start'],
      {
        HOST: undefined,
        RUNPLANE_DATA_DIR: 'memory',
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        RUNPLANE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
      workDir,
    );
    ({ url } = await server.waitForReady(120_000));
    endpoint = await provisionEndpoint(url, ADMIN_KEY, 'e2e-bind');
  }, 180_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 60_000);

  it('listens on loopback only when HOST is not set, and says so', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await request(url, 'GET', '/healthz')).status).toBe(200);

    const port = Number(new URL(url).port);
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4');
    if (!external) {
      process.stderr.write(
        '\n[e2e] SKIPPED: this machine has no non-loopback IPv4 address; cannot check that the ' +
          'default bind address is unreachable from outside\n\n',
      );
      return;
    }
    const outcome = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: external.address, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(outcome).toBe('ECONNREFUSED');
  });

  it('cuts off a client that sends the headers and then stalls or dribbles the body', async () => {
    const head =
      `POST /v2/${endpoint}/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"input":{"pad":"`;
    const stalled = rawUpload(url, head, '127.0.0.5');
    const dribbling = rawUpload(url, head, '127.0.0.5');
    const drip = setInterval(() => dribbling.socket.write('x'), 100);
    try {
      await Promise.all([stalled.closed, dribbling.closed]); // jest's timeout is the generous bound
    } finally {
      clearInterval(drip);
    }
    for (const c of [stalled, dribbling])
      if (c.received()) expect(parseRaw(c.received()).status).toBe(408);

    // The bound is on receiving the request, not on the answer: a long poll outlives it.
    const job = await request(url, 'POST', `/v2/${endpoint}/run`, {
      from: '127.0.0.5',
      key: ADMIN_KEY,
      body: { input: {} },
    });
    expect(job.status).toBe(200);
    const poll = await request(
      url,
      'GET',
      `/v2/${endpoint}/status-sync/${job.body.id}?wait=${3 * REQUEST_TIMEOUT_MS}`,
      { from: '127.0.0.5', key: ADMIN_KEY },
    );
    expect(poll).toMatchObject({ status: 200, body: { id: job.body.id, status: 'IN_QUEUE' } });
  }, 120_000);
});
