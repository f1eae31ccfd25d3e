import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import {
  ADMIN_KEY,
  CLI,
  http,
  killAll,
  notAnswering,
  provisionEndpoint,
  recordTiming,
  removeTempDir,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';
import { describeManagementApi } from './support/management-api.js';

/**
 * `runplane start`: all six services in one process, embedded database in RUNPLANE_DATA_DIR and
 * the in-process bus. The tests run in order and share one data directory: the server is stopped,
 * restarted and must still know the job.
 */
describe('standalone server (runplane start)', () => {
  const workDir = tempDir('standalone');
  const dataDir = path.join(workDir, 'data');
  const env = { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_API_KEY: ADMIN_KEY };
  let server: RunplaneProcess;
  let url: string;
  let endpoint: string;
  let jobId: string;

  beforeAll(async () => {
    // The first start on an empty data dir (the other suites start on an initialised copy).
    server = startRunplane('standalone', ['start'], env, workDir, CLI, { freshDataDir: true });
    const ready = await server.waitForReady(60_000);
    url = ready.url;
    recordTiming(
      `standalone: /readyz 200 after ${(ready.ms / 1000).toFixed(1)} s (fresh data dir, from spawn)`,
    );
    endpoint = await provisionEndpoint(url, ADMIN_KEY, 'e2e-endpoint');
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('answers /healthz and /readyz', async () => {
    const health = await http('GET', `${url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await http('GET', `${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok' });
  });

  it('queues a job with the admin key as a Bearer token and as the raw key', async () => {
    const bearer = await http('POST', `${url}/v2/${endpoint}/run`, {
      key: `Bearer ${ADMIN_KEY}`,
      body: { input: { prompt: 'hello' } },
    });
    expect(bearer.status).toBe(200);
    expect(bearer.body).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    jobId = bearer.body.id;

    const raw = await http('POST', `${url}/v2/${endpoint}/run`, {
      key: ADMIN_KEY,
      body: { input: { n: 2 } },
    });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    expect(raw.body.id).not.toBe(jobId);
  });

  it('reports the job status by GET and by POST', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await http(method, `${url}/v2/${endpoint}/status/${jobId}`, {
        key: `Bearer ${ADMIN_KEY}`,
      });
      expect({ method, status: res.status, body: res.body }).toEqual({
        method,
        status: 200,
        body: { id: jobId, status: 'IN_QUEUE', retries: 0 },
      });
    }
  });

  it('rejects a wrong key with 401 and a JSON error body', async () => {
    for (const key of ['Bearer not-the-key-at-all', 'not-the-key-at-all']) {
      const res = await http('POST', `${url}/v2/${endpoint}/run`, { key, body: { input: {} } });
      expect(res.status).toBe(401);
      expect(res.contentType).toMatch(/application\/json/);
      expect(res.body).toMatchObject({
        error: expect.any(String),
        message: expect.any(String),
        status: 401,
      });
    }
    const none = await http('GET', `${url}/v2/${endpoint}/status/${jobId}`);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ status: 401 });
  });

  it('rejects malformed JSON with 400 and a JSON error body', async () => {
    const res = await http('POST', `${url}/v2/${endpoint}/run`, {
      key: ADMIN_KEY,
      rawBody: '{"input": {',
    });
    expect(res.status).toBe(400);
    expect(res.contentType).toMatch(/application\/json/);
    expect(res.body).toMatchObject({
      error: expect.any(String),
      message: expect.any(String),
      status: 400,
    });
  });

  it('does not show the job under another endpoint id (404)', async () => {
    const res = await http('GET', `${url}/v2/another-endpoint/status/${jobId}`, { key: ADMIN_KEY });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      error: expect.any(String),
      message: expect.any(String),
      status: 404,
    });
    if (endpoint !== 'e2e-endpoint') {
      // endpoints exist as resources: an unknown one takes no jobs
      const run = await http('POST', `${url}/v2/another-endpoint/run`, {
        key: ADMIN_KEY,
        body: { input: {} },
      });
      expect({ status: run.status, code: run.body?.code }).toEqual({
        status: 404,
        code: 'ENDPOINT_NOT_FOUND',
      });
    }
  });

  it("carries a job's input, stream and output as sent, keys named like Object's members included", async () => {
    // Keys a JavaScript object inherits (or Nest's prototype guard strips) are ordinary keys in
    // a user's JSON: once they were dropped on the way to the worker and back.
    const data = (tag: string) => ({
      tag,
      constructor: 'c',
      prototype: { constructor: [1] },
      toString: 's',
      valueOf: 2,
      hasOwnProperty: null,
      nested: { constructor: { a: 1 }, isPrototypeOf: true },
    });
    const ep = await provisionEndpoint(url, ADMIN_KEY, 'e2e-payload-endpoint');
    const q = `${url}/v2/${ep}`;
    const run = await http('POST', `${q}/run`, { key: ADMIN_KEY, body: { input: data('in') } });
    expect(run.status).toBe(200);
    const taken = await http('GET', `${q}/job-take/payload-worker`, { key: ADMIN_KEY });
    expect({ status: taken.status, body: taken.body }).toEqual({
      status: 200,
      body: { id: run.body.id, input: data('in') },
    });
    const worker = `payload-worker/${run.body.id}`;
    const chunk = await http('POST', `${q}/job-stream/${worker}`, {
      key: ADMIN_KEY,
      body: { output: data('chunk') },
    });
    expect(chunk.status).toBe(200);
    const done = await http('POST', `${q}/job-done/${worker}`, {
      key: ADMIN_KEY,
      body: { output: data('out') },
    });
    expect(done.status).toBe(200);
    const stream = await http('GET', `${q}/stream/${run.body.id}`, { key: ADMIN_KEY });
    expect(stream.body.stream).toEqual([{ output: data('chunk') }]);
    const status = await http('GET', `${q}/status/${run.body.id}`, { key: ADMIN_KEY });
    expect(status.body).toMatchObject({ status: 'COMPLETED', output: data('out') });
  });

  describeManagementApi(() => ({ graphql: url, rest: url, vault: url }));

  it('refuses a second server on the same data directory while the first runs', async () => {
    const second = startRunplane('standalone-second', ['start'], env, workDir);
    const exit = await second.waitForExit(60_000);
    expect(exit.code).not.toBe(0);
    expect(second.log).toMatch(/data directory .* is in use/i);
    // The first server is unharmed.
    expect((await http('GET', `${url}/readyz`)).status).toBe(200);
  }, 70_000);

  it('stops on SIGTERM with exit code 0 within 25 s and stops answering', async () => {
    server.signalGroup('SIGTERM');
    const exit = await server.waitForExit(25_000);
    recordTiming(`standalone: SIGTERM -> exit ${exit.code} after ${(exit.ms / 1000).toFixed(1)} s`);
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    expect(await notAnswering(`${url}/readyz`)).toBe(true);
  }, 30_000);

  it('keeps the job across a restart on the same data directory', async () => {
    const restarted = startRunplane('standalone-restarted', ['start'], env, workDir);
    const ready = await restarted.waitForReady(60_000);
    recordTiming(
      `standalone: restart on the same data dir ready after ${(ready.ms / 1000).toFixed(1)} s`,
    );
    const res = await http('GET', `${ready.url}/v2/${endpoint}/status/${jobId}`, {
      key: ADMIN_KEY,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: jobId, status: 'IN_QUEUE', retries: 0 });
  }, 70_000);
});
