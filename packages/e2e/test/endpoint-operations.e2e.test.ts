import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ADMIN_KEY,
  eventually,
  http,
  killAll,
  removeTempDir,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);

/**
 * Operating endpoints through REST on a standalone server with real managed workers: the workers
 * of an endpoint, why its jobs wait (`waiting`), and its metrics.
 */
describe('operating endpoints: workers, waiting, metrics (standalone)', () => {
  const workDir = tempDir('endpoint-operations');
  let server: RunplaneProcess;
  let url: string;

  const call = (method: string, route: string, body?: unknown, key = ADMIN_KEY) =>
    http(method, `${url}${route}`, { key: `Bearer ${key}`, body });
  const endpointOn = async (
    command: string[],
    workersMax: number,
    key = ADMIN_KEY,
    env: Record<string, string> = {},
  ): Promise<string> => {
    const t = await call(
      'POST',
      '/v1/templates',
      {
        name: `ops-${randomBytes(4).toString('hex')}`,
        imageName: 'runplane-e2e/probe:1',
        isServerless: true,
        dockerStartCmd: command,
        env,
      },
      key,
    );
    expect(t.status).toBe(200);
    const e = await call(
      'POST',
      '/v1/endpoints',
      { name: 'ops', templateId: t.body.id, workersMin: 0, workersMax },
      key,
    );
    expect(e.status).toBe(200);
    return e.body.id as string;
  };
  const submit = async (ep: string, key = ADMIN_KEY) => {
    const res = await call('POST', `/v2/${ep}/run`, { input: {} }, key);
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const reason = (ep: string, code: string, key = ADMIN_KEY) =>
    eventually(
      async () =>
        (
          (await call('GET', `/v1/endpoints/${ep}`, undefined, key)).body?.waiting?.reasons ?? []
        ).find((r: { code: string }) => r.code === code),
      `${code} on ${ep}`,
      90_000,
    );

  beforeAll(async () => {
    server = startRunplane(
      'endpoint-operations',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('a probe worker runs a job: it is listed with its Pod, and the metrics count the job and its cold start', async () => {
    const ep = await endpointOn([process.execPath, PROBE_WORKER], 1);
    const job = await submit(ep);
    await eventually(
      async () => (await call('GET', `/v2/${ep}/status/${job}`)).body?.status === 'COMPLETED',
      'the job to complete',
      90_000,
    );
    const workers = await call('GET', `/v1/endpoints/${ep}/workers`);
    expect(workers.status).toBe(200);
    expect(workers.body).toEqual([
      expect.objectContaining({
        podId: expect.any(String),
        state: expect.stringMatching(/^(IDLE|RUNNING)$/),
        endedAt: null,
        version: 1,
        isStale: false,
        exitCode: null,
        reason: null,
        lastSeenAt: expect.any(String),
      }),
    ]);

    const m = await call('GET', `/v1/endpoints/${ep}/metrics`);
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({
      window: '1h',
      jobs: { completed: 1, failed: 0, timedOut: 0, retried: 0 },
      delayTime: { samples: 1, p70: expect.any(Number) },
      executionTime: { samples: 1, p98: expect.any(Number) },
      coldStart: { samples: 1, p90: expect.any(Number) },
    });
    expect((await call('GET', `/v1/endpoints/${ep}/metrics?window=15m`)).body.window).toBe('15m');
    const bad = await call('GET', `/v1/endpoints/${ep}/metrics?window=2d`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('window');
    expect((await call('GET', `/v1/endpoints/${ep}`)).body.waiting).toBeUndefined();
  }, 150_000);

  it('a crash-looping worker: START_BACKOFF with its exit code and last output, listed as EXITED', async () => {
    const ep = await endpointOn(
      [process.execPath, '-e', 'console.log("ops-probe: cannot load the model"); process.exit(3)'],
      1,
    );
    await submit(ep);
    // The worker's lines are stored in batches: the reason may come before them.
    const backoff = await eventually(
      async () => {
        const found = await reason(ep, 'START_BACKOFF');
        return found.logs?.length ? found : undefined;
      },
      'START_BACKOFF with the last lines of the worker',
      90_000,
    );
    expect(backoff).toMatchObject({
      exitCode: 3,
      reason: 'crashed: exit code 3',
      failures: expect.any(Number),
      nextAttemptAt: expect.any(String),
      logs: expect.arrayContaining([expect.stringContaining('cannot load the model')]),
    });
    const listed = (await call('GET', '/v1/endpoints')).body.find(
      (e: { id: string }) => e.id === ep,
    );
    expect(listed.waiting.jobs).toBe(1);
    const workers = (await call('GET', `/v1/endpoints/${ep}/workers`)).body;
    expect(workers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ state: 'EXITED', exitCode: 3, reason: 'crashed: exit code 3' }),
      ]),
    );
  }, 150_000);

  it("a start refused for a missing secret: START_REFUSED; workersMax 0: NO_WORKERS_ALLOWED; another user's endpoint is 404", async () => {
    const user = await call('POST', '/v1/users', { name: `ops-${randomBytes(3).toString('hex')}` });
    expect(user.status).toBeLessThan(300);
    const created = await call('POST', '/v1/apikeys', {
      name: 'ops-key',
      userId: user.body.id,
      scope: 'readwrite',
    });
    const key = created.body.key as string;

    // A template naming a secret that does not exist: pod-rest refuses the start.
    const ep = await endpointOn([process.execPath, PROBE_WORKER], 1, ADMIN_KEY, {
      TOKEN: '{{ RUNPOD_SECRET_ops_missing }}',
    });
    await submit(ep);
    const refused = await reason(ep, 'START_REFUSED');
    expect(refused.reason).toContain('SECRET_NOT_FOUND');
    expect(refused.nextAttemptAt).toEqual(expect.any(String));
    expect((await call('GET', `/v1/endpoints/${ep}/workers`)).body[0]).toMatchObject({
      state: 'EXITED',
      reason: expect.stringMatching(/^start refused: .*SECRET_NOT_FOUND/),
    });

    const none = await endpointOn([process.execPath, PROBE_WORKER], 0);
    await submit(none);
    expect((await call('GET', `/v1/endpoints/${none}`)).body.waiting).toEqual({
      jobs: 1,
      reasons: [{ code: 'NO_WORKERS_ALLOWED', message: expect.any(String) }],
    });

    for (const route of [`/v1/endpoints/${none}/workers`, `/v1/endpoints/${none}/metrics`]) {
      const res = await call('GET', route, undefined, key);
      expect(res.status).toBe(404);
    }
  }, 150_000);
});
