import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import http from 'node:http';
import path from 'node:path';
import {
  ADMIN_KEY,
  http as call,
  killAll,
  removeTempDir,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

/**
 * Bad input never hurts the server: thousands of generated bad requests (wrong types, huge
 * numbers, unicode, deep nesting, invalid JSON, missing fields, wrong methods, odd content types,
 * bad keys) against every route of a standalone server get answers below 500, and the server still
 * works afterwards. Deterministic: a fixed seed (RUNPLANE_FUZZ_SEED to explore others) and count
 * (RUNPLANE_FUZZ_REQUESTS). A failure prints each offending request so it can be replayed.
 */
const SEED = Number(process.env.RUNPLANE_FUZZ_SEED ?? 20261122);
const COUNT = Number(process.env.RUNPLANE_FUZZ_REQUESTS ?? 10_000);
const IN_FLIGHT = 16;

interface Route {
  method: string;
  path: string;
}
interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Every route, `:ep` etc. filled in per request with a real id or junk. */
const ROUTES: Route[] = [
  ...['run', 'runsync', 'purge-queue'].map((op) => ({ method: 'POST', path: `/v2/:ep/${op}` })),
  ...['status', 'status-sync', 'stream'].flatMap((op) =>
    ['GET', 'POST'].map((method) => ({ method, path: `/v2/:ep/${op}/:job` })),
  ),
  ...['cancel', 'retry'].map((op) => ({ method: 'POST', path: `/v2/:ep/${op}/:job` })),
  { method: 'GET', path: '/v2/:ep/health' },
  { method: 'GET', path: '/v2/:ep/requests' },
  { method: 'POST', path: '/v2/:ep/openai/v1/chat/completions' },
  { method: 'POST', path: '/v2/:ep/openai/v1/completions' },
  { method: 'GET', path: '/v2/:ep/openai/v1/models' },
  { method: 'GET', path: '/v2/:ep/job-take/:worker' },
  { method: 'GET', path: '/v2/:ep/job-take-batch/:worker' },
  { method: 'POST', path: '/v2/:ep/job-done/:worker/:job' },
  { method: 'POST', path: '/v2/:ep/job-stream/:worker/:job' },
  { method: 'GET', path: '/v2/:ep/ping/:worker' },
  { method: 'GET', path: '/v2/:ep/job-stop/:worker' },
  { method: 'POST', path: '/v1/templates' },
  { method: 'GET', path: '/v1/templates' },
  { method: 'GET', path: '/v1/templates/:tpl' },
  { method: 'PATCH', path: '/v1/templates/:tpl' },
  { method: 'POST', path: '/v1/templates/:tpl/update' },
  { method: 'DELETE', path: '/v1/templates/:tpl' },
  { method: 'POST', path: '/v1/endpoints' },
  { method: 'GET', path: '/v1/endpoints' },
  { method: 'GET', path: '/v1/endpoints/:ep' },
  { method: 'PATCH', path: '/v1/endpoints/:ep' },
  { method: 'POST', path: '/v1/endpoints/:ep/update' },
  { method: 'DELETE', path: '/v1/endpoints/:ep' },
  { method: 'POST', path: '/v1/pods' },
  { method: 'GET', path: '/v1/pods' },
  { method: 'GET', path: '/v1/pods/:pod' },
  { method: 'PATCH', path: '/v1/pods/:pod' },
  { method: 'POST', path: '/v1/pods/:pod/update' },
  { method: 'DELETE', path: '/v1/pods/:pod' },
  ...['start', 'stop', 'restart', 'reset'].map((op) => ({
    method: 'POST',
    path: `/v1/pods/:pod/${op}`,
  })),
  { method: 'POST', path: '/v1/users' },
  { method: 'GET', path: '/v1/users' },
  { method: 'POST', path: '/v1/apikeys' },
  { method: 'GET', path: '/v1/apikeys' },
  { method: 'DELETE', path: '/v1/apikeys/:key' },
  { method: 'GET', path: '/v1/webhooks/deliveries' },
  { method: 'POST', path: '/graphql' },
  { method: 'GET', path: '/graphql' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/json; charset=utf-16',
  'application/octet-stream',
  'nonsense',
];
const QUERY_KEYS = [
  'wait',
  'ttl',
  'batch_size',
  'job_in_progress',
  'isStream',
  'gpu',
  'includeMachine',
  'includeWorkers',
  'includeSavingsPlans',
  'desiredStatus',
  'gpuTypeId',
  'api_key',
  'limit',
  'cursor',
  'status',
  'jobId',
  'userId',
];

// ---- generators --------------------------------------------------------------------------------

const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '..',
    '%00',
    '%ZZ',
    '%2F..%2F',
    '$ID',
    '$RUNPOD_POD_ID',
    'null',
    'undefined',
    '-1',
    '1e309',
    'NaN',
    '🚀'.repeat(50),
    'a'.repeat(3000),
  ),
  fc.integer().map(String),
);

/** A path segment: mostly a real id of the right kind, else junk (percent-encoded unless deliberately raw). */
function segment(real: string) {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(real) },
    {
      weight: 3,
      arbitrary: junkText.map((s) => (/^%(00|ZZ|2F)/.test(s) ? s : encodeURIComponent(s))),
    },
  );
}

const hugeNumber = fc.constantFrom(
  1e308,
  -1e308,
  2 ** 53 + 1,
  -(2 ** 63),
  0.1 + 0.2,
  Number.MIN_VALUE,
  1e21,
);
const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hugeNumber,
  junkText,
  fc.constant(null),
  fc.boolean(),
  fc.array(junkText, { maxLength: 4 }),
);

/** A body shaped like a real request with fields of wrong types, sizes or content. */
const nearlyValidBody = fc
  .oneof(
    fc.record(
      {
        input: weirdValue,
        webhook: weirdValue,
        policy: fc.oneof(
          weirdValue,
          fc.record(
            { executionTimeout: weirdValue, ttl: weirdValue, lowPriority: weirdValue },
            { requiredKeys: [] },
          ),
        ),
        s3Config: weirdValue,
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        name: weirdValue,
        imageName: weirdValue,
        templateId: weirdValue,
        workersMin: weirdValue,
        workersMax: weirdValue,
        env: weirdValue,
        ports: weirdValue,
        dockerStartCmd: fc.constant([]),
        containerDiskInGb: weirdValue,
        volumeInGb: weirdValue,
        scope: weirdValue,
        userId: weirdValue,
        endpointId: weirdValue,
        isServerless: weirdValue,
      },
      { requiredKeys: [] },
    ),
    // Pod bodies (create and update), with random commands: the server runs no Pod process (see beforeAll).
    fc.record(
      {
        name: weirdValue,
        imageName: weirdValue,
        templateId: weirdValue,
        computeType: weirdValue,
        cloudType: weirdValue,
        gpuTypeIds: weirdValue,
        gpuCount: weirdValue,
        vcpuCount: weirdValue,
        cpuFlavorIds: weirdValue,
        dockerStartCmd: fc.oneof(weirdValue, fc.array(junkText, { maxLength: 3 })),
        dockerEntrypoint: weirdValue,
        env: weirdValue,
        ports: weirdValue,
        locked: weirdValue,
        interruptible: weirdValue,
        networkVolumeId: weirdValue,
        volumeMountPath: weirdValue,
        minRAMPerGPU: weirdValue,
      },
      { requiredKeys: [] },
    ),
    fc.record(
      { output: weirdValue, error: weirdValue, status: weirdValue, stopPod: weirdValue },
      { requiredKeys: [] },
    ),
    fc.record(
      { model: weirdValue, messages: weirdValue, stream: weirdValue },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        query: fc.oneof(
          junkText,
          fc.constantFrom(
            'mutation { saveTemplate(input: {name: 1}) { id } }',
            'mutation { deleteTemplate(templateName: null) }',
            'mutation { secretCreate(input: {name: "", value: ""}) { id } }',
            'mutation { secretDelete(id: "") }',
            'query { myself { podTemplates { id } secrets { id } } }',
            'query { podTemplate(id: "x") { id name } }',
            '{ __schema { types { name } } }',
            `query { ${'a { '.repeat(200)}${'}'.repeat(200)} }`,
          ),
        ),
        variables: weirdValue,
      },
      { requiredKeys: [] },
    ),
  )
  .map((value) => JSON.stringify(value));

const body = fc.oneof(
  { weight: 5, arbitrary: nearlyValidBody },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 20_000 })
      .map((n) => `${'{"input":'.repeat(n)}1${'}'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '1e400',
      '-1e400',
      '123456789012345678901234567890',
      'NaN',
      'Infinity',
      '{"input": 1e999}',
      '{"input":{"a":1,"a":2}}',
      '{"__proto__":{"x":1},"input":{}}',
      '{"constructor":{"prototype":{"x":1}},"input":{}}',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.constant('') },
);

const auth = fc.oneof(
  { weight: 17, arbitrary: fc.constant(`Bearer ${ADMIN_KEY}`) },
  { weight: 1, arbitrary: fc.constant(ADMIN_KEY) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: junkText.map((s) => `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}`) },
);

function requests(ids: Record<string, string>): FuzzRequest[] {
  const request = fc
    .record({
      route: fc.constantFrom(...ROUTES),
      wrongMethod: fc.option(fc.constantFrom(...METHODS), { freq: 4 }),
      ep: segment(ids.ep),
      job: segment(ids.job),
      worker: segment(ids.worker),
      tpl: segment(ids.tpl),
      pod: segment(ids.pod),
      key: segment(ids.key),
      query: fc.dictionary(
        fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 8 })),
        junkText,
        { maxKeys: 3 },
      ),
      contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 6 }),
      auth,
      body: fc.option(body, { freq: 8 }),
    })
    .map((r): FuzzRequest => {
      const method = r.wrongMethod ?? r.route.method;
      let urlPath = r.route.path.replace(
        /:(\w+)/g,
        (_, name: string) => (r as unknown as Record<string, string>)[name],
      );
      const query = Object.entries(r.query).map(
        ([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`,
      );
      // Keep long polls short unless their `wait` is itself being fuzzed.
      if (/\/(runsync|status-sync|stream)\//.test(`${urlPath}/`) && !('wait' in r.query))
        query.push('wait=1000');
      if (query.length) urlPath += `?${query.join('&')}`;
      const headers: Record<string, string> = {};
      if (r.auth !== undefined) headers.authorization = r.auth;
      if (r.contentType !== null) headers['content-type'] = r.contentType;
      return { method, path: urlPath, headers, body: r.body ?? undefined };
    });
  return fc.sample(request, { seed: SEED, numRuns: COUNT });
}

// ---- sending -----------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

/** Sends one request; resolves with its status, or a description of a failure to get one. */
function send(base: URL, r: FuzzRequest): Promise<{ status?: number; problem?: string }> {
  return new Promise((resolve) => {
    let req: http.ClientRequest;
    try {
      // An explicit length (never chunked) keeps every request, even a HEAD with a body, unambiguous on a kept-alive connection.
      const headers =
        r.body === undefined
          ? r.headers
          : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
      req = http.request(
        {
          host: base.hostname,
          port: base.port,
          method: r.method,
          path: r.path,
          headers,
          agent,
          timeout: 35_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode }));
          res.on('error', (err) =>
            resolve({ status: res.statusCode, problem: `response aborted: ${err.message}` }),
          );
        },
      );
    } catch (err) {
      resolve({ problem: `client refused to send: ${(err as Error).message}` });
      return;
    }
    req.on('timeout', () => req.destroy(new Error('no answer within 35 s')));
    req.on('error', (err) => resolve({ problem: `connection: ${err.message}` }));
    req.end(r.body);
  });
}

describe(`fuzz: ${COUNT} bad requests (seed ${SEED}) against a standalone server`, () => {
  const workDir = tempDir('fuzz');
  let url: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    const server = startRunplane(
      'fuzz',
      ['start'],
      {
        RUNPLANE_DATA_DIR: path.join(workDir, 'data'),
        RUNPLANE_API_KEY: ADMIN_KEY,
        // Reach the handlers: 429s would hide most of them (the limits have their own tests).
        RUNPLANE_RATE_LIMITS: 'false',
        RUNPLANE_MANAGEMENT_RATE_LIMIT: '0',
        // Fuzzed keys are made up: the failed-authentication limit of this address would soon
        // answer 429 to everything (that limit has its own test).
        RUNPLANE_AUTH_FAILURE_LIMIT: '0',
        // Fuzzed Pods have random commands: they are recorded, never run on this machine.
        RUNPLANE_LOCAL_POD_PROCESSES: 'false',
      },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
    // Real ids so many requests get past "not found" into validation and state checks. The
    // template has no command, so nothing the fuzzer configures can start a process.
    const tpl = await call('POST', `${url}/v1/templates`, {
      key: ADMIN_KEY,
      body: { name: 'fuzz-template', imageName: 'fuzz/none:1', isServerless: true },
    });
    const ep = await call('POST', `${url}/v1/endpoints`, {
      key: ADMIN_KEY,
      body: { name: 'fuzz', templateId: tpl.body.id, workersMin: 0, workersMax: 0 },
    });
    const job = await call('POST', `${url}/v2/${ep.body.id}/run`, {
      key: ADMIN_KEY,
      body: { input: { n: 1 } },
    });
    const key = await call('POST', `${url}/v1/apikeys`, {
      key: ADMIN_KEY,
      body: { name: 'fuzz', scope: 'readonly' },
    });
    const pod = await call('POST', `${url}/v1/pods`, {
      key: ADMIN_KEY,
      body: { name: 'fuzz-pod', imageName: 'fuzz/none:1', dockerStartCmd: ['fuzz-must-not-run'] },
    });
    expect([tpl.status, ep.status, job.status, key.status, pod.status]).toEqual([
      200, 200, 200, 200, 201,
    ]);
    expect(pod.body).toMatchObject({
      desiredStatus: 'EXITED',
      lastStatusChange: expect.stringMatching(/^Not started/),
    });
    ids = {
      tpl: tpl.body.id,
      ep: ep.body.id,
      job: job.body.id,
      key: key.body.id,
      worker: 'fuzz-worker',
      pod: pod.body.id,
    };
  }, 90_000);

  afterAll(async () => {
    agent.destroy();
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('answers every one below 500 and keeps working', async () => {
    const base = new URL(url);
    const all = requests(ids);
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < all.length) {
          const r = all[next++];
          const { status, problem } = await send(base, r);
          if (status !== undefined) statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (problem?.startsWith('client refused')) continue; // Node's own check, the server never saw it
          if (problem || (status ?? 500) >= 500) {
            failures.push(
              `${status ?? '-'} ${problem ?? ''} ${r.method} ${r.path.slice(0, 200)} ${JSON.stringify(r.headers)} body=${JSON.stringify(r.body?.slice(0, 300))}`,
            );
          }
        }
      }),
    );
    process.stderr.write(
      `[fuzz] ${all.length} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}\n`,
    );
    expect(failures.slice(0, 20)).toEqual([]);
    // Alive and still doing its job (on a fresh endpoint: the fuzzer may have deleted the first).
    expect((await call('GET', `${url}/readyz`)).status).toBe(200);
    const tpl = await call('POST', `${url}/v1/templates`, {
      key: ADMIN_KEY,
      body: { name: 'after-fuzz', imageName: 'fuzz/none:1', isServerless: true },
    });
    const ep = await call('POST', `${url}/v1/endpoints`, {
      key: ADMIN_KEY,
      body: { name: 'after-fuzz', templateId: tpl.body.id, workersMax: 0 },
    });
    const run = await call('POST', `${url}/v2/${ep.body.id}/run`, {
      key: ADMIN_KEY,
      body: { input: { after: 'fuzz' } },
    });
    expect(run).toMatchObject({ status: 200, body: { status: 'IN_QUEUE' } });
    expect(
      (await call('GET', `${url}/v2/${ep.body.id}/status/${run.body.id}`, { key: ADMIN_KEY })).body,
    ).toMatchObject({ status: 'IN_QUEUE' });
    // No fuzzed Pod ever ran: every one the fuzzer created is recorded as not started.
    const pods = await call('GET', `${url}/v1/pods`, { key: ADMIN_KEY });
    expect(pods.status).toBe(200);
    expect(
      pods.body.filter(
        (p: { lastStatusChange: string }) => !p.lastStatusChange.startsWith('Not started'),
      ),
    ).toEqual([]);
  }, 600_000);
});
