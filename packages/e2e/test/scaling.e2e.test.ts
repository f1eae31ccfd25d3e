import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import {
  ADMIN_KEY,
  REPO_ROOT,
  http,
  killAll,
  recordTiming,
  removeTempDir,
  sleep,
  startRunplane,
  tempDir,
} from './support/runplane-process.js';

/**
 * The autoscaler through the public API with real worker processes (examples/worker-echo on the
 * local compute provider): a burst of 200 jobs on an endpoint with workersMin 1 and workersMax 4
 * scales it to 4 workers (never more), drains the queue, and after idleTimeout it is back to
 * workersMin. Every job completes exactly once with its own output: none lost, none cancelled,
 * none retried (a busy worker is never stopped).
 */
const JOBS = 200;
const WORKERS_MIN = 1;
const WORKERS_MAX = 4;
const IDLE_TIMEOUT_S = 2;

describe('autoscaling a burst of jobs (standalone, real workers)', () => {
  const workDir = tempDir('scaling');
  const key = `Bearer ${ADMIN_KEY}`;
  let url: string;
  let ep: string;

  const health = async () =>
    (await http('GET', `${url}/v2/${ep}/health`, { key })).body as {
      jobs: Record<string, number>;
      workers: Record<string, number>;
    };
  const workerPods = async () =>
    (await http('GET', `${url}/v1/pods?includeWorkers=true&endpointId=${ep}`, { key }))
      .body as Array<{ id: string; desiredStatus: string }>;

  beforeAll(async () => {
    const server = startRunplane(
      'scaling',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
    const worker = path.join(REPO_ROOT, 'examples/worker-echo/worker.mjs');
    const tpl = await http('POST', `${url}/v1/templates`, {
      key,
      body: {
        name: 'scaling-echo',
        imageName: 'runplane/worker-echo:1',
        isServerless: true,
        dockerStartCmd: [process.execPath, worker],
      },
    });
    const endpoint = await http('POST', `${url}/v1/endpoints`, {
      key,
      body: {
        name: 'scaling',
        templateId: tpl.body.id,
        workersMin: WORKERS_MIN,
        workersMax: WORKERS_MAX,
        idleTimeout: IDLE_TIMEOUT_S,
        scalerType: 'QUEUE_DELAY',
        scalerValue: 1,
      },
    });
    expect([tpl.status, endpoint.status]).toEqual([200, 200]);
    ep = endpoint.body.id;
    // workersMin: one worker up before the burst.
    await waitUntil(
      async () => (await health()).workers.idle === WORKERS_MIN,
      60_000,
      'the workersMin worker to be idle',
    );
  }, 120_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it(`${JOBS} jobs scale to workersMax ${WORKERS_MAX}, drain, and the endpoint returns to workersMin after idleTimeout; no job lost, cancelled or retried`, async () => {
    const startedAt = Date.now();
    const submitted = await Promise.all(
      Array.from({ length: JOBS }, async (_, i) => {
        const res = await http('POST', `${url}/v2/${ep}/run`, {
          key,
          body: { input: { echo: i, sleep_ms: 250 } },
        });
        expect(res.status).toBe(200);
        return res.body.id as string;
      }),
    );
    expect(new Set(submitted).size).toBe(JOBS);

    // Watch the workers while the queue drains.
    let maxWorkers = 0;
    let maxRunningPods = 0;
    let drained = false;
    while (!drained) {
      const [h, pods] = await Promise.all([health(), workerPods()]);
      const up = h.workers.idle + h.workers.running + h.workers.initializing;
      maxWorkers = Math.max(maxWorkers, up);
      maxRunningPods = Math.max(
        maxRunningPods,
        pods.filter((p) => p.desiredStatus === 'RUNNING').length,
      );
      drained = h.jobs.inQueue === 0 && h.jobs.inProgress === 0;
      if (Date.now() - startedAt > 180_000)
        throw new Error(`not drained after 180 s: ${JSON.stringify(h)}`);
      if (!drained) await sleep(200);
    }
    const drainMs = Date.now() - startedAt;
    expect(maxWorkers).toBe(WORKERS_MAX);
    expect(maxRunningPods).toBeLessThanOrEqual(WORKERS_MAX);
    expect(maxRunningPods).toBeGreaterThanOrEqual(WORKERS_MAX - 1); // sampled: at least close to the peak

    // Every job: COMPLETED once, its own output, never retried or cancelled.
    const records = await Promise.all(
      submitted.map(
        async (id) => (await http('GET', `${url}/v2/${ep}/status/${id}`, { key })).body,
      ),
    );
    const byStatus: Record<string, number> = {};
    for (const r of records) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    expect(byStatus).toEqual({ COMPLETED: JOBS });
    records.forEach((r, i) => {
      expect(r.output).toBe(i);
      expect(r.retries ?? 0).toBe(0);
    });
    expect((await health()).jobs).toMatchObject({
      completed: JOBS,
      failed: 0,
      inProgress: 0,
      inQueue: 0,
      retried: 0,
    });

    // Idle workers above workersMin stop after idleTimeout: back to workersMin, and the stopped ones' Pods are TERMINATED.
    await waitUntil(
      async () => {
        const h = await health();
        return h.workers.idle + h.workers.running + h.workers.initializing === WORKERS_MIN;
      },
      60_000,
      `the endpoint to be back to workersMin (${WORKERS_MIN})`,
    );
    const settledMs = Date.now() - startedAt;
    await waitUntil(
      async () =>
        (await workerPods()).filter((p) => p.desiredStatus === 'RUNNING').length === WORKERS_MIN,
      30_000,
      'one RUNNING worker Pod',
    );
    const pods = await workerPods();
    expect(pods.filter((p) => p.desiredStatus === 'TERMINATED').length).toBeGreaterThanOrEqual(
      WORKERS_MAX - WORKERS_MIN,
    );
    expect((await health()).workers).toMatchObject({ unhealthy: 0, throttled: 0 });
    recordTiming(
      `scaling: ${JOBS} jobs of 250 ms, workersMax ${WORKERS_MAX}: drained in ${drainMs} ms, back to workersMin after ${settledMs} ms (peak ${maxWorkers} workers)`,
    );
  }, 300_000);
});

async function waitUntil(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}
