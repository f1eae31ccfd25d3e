import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
import runpodSdk from 'runpod-sdk';
import { ADMIN_KEY, REPO_ROOT, http, killAll, removeTempDir, sleep, startRunplane, tempDir } from './support/runplane-process.js';

/**
 * The official RunPod JS client (npm `runpod-sdk`, pinned 1.1.2) against a standalone server, with
 * `baseUrl <server>/v2` as its users configure it, and a real managed worker: the example worker
 * (`examples/worker-echo`, written with @runplane/worker-sdk, which speaks the protocol exactly as
 * runpod-python does: raw key, form-labelled JSON bodies, `&`-appended parameters) started by the
 * local compute provider. Nothing is stubbed: client → queue-api → scheduler → worker and back.
 */
describe('runpod-sdk (official JS client) against standalone Runplane', () => {
  const workDir = tempDir('runpod-sdk');
  const worker = path.join(REPO_ROOT, 'examples/worker-echo/worker.mjs');
  let url: string;
  let busy: Endpoint; // one warm worker
  let idle: Endpoint; // no workers: jobs stay queued

  type Endpoint = ReturnType<ReturnType<typeof runpodSdk>['endpoint']> & {};

  async function createEndpoint(name: string, workers: number): Promise<string> {
    const template = await http('POST', `${url}/v1/templates`, {
      key: ADMIN_KEY,
      body: { name: `sdk-${name}-${Date.now()}`, imageName: 'runplane/worker-echo:1', isServerless: true, dockerStartCmd: ['node', worker] },
    });
    expect(template.status).toBe(200);
    const endpoint = await http('POST', `${url}/v1/endpoints`, {
      key: ADMIN_KEY,
      body: { name: `sdk-${name}`, templateId: template.body.id, workersMin: workers, workersMax: workers },
    });
    expect(endpoint.status).toBe(200);
    return endpoint.body.id;
  }

  /** runpod-sdk logs its polling with console.log; keep the test output readable. */
  async function quiet<T>(fn: () => Promise<T>): Promise<T> {
    const log = console.log;
    console.log = () => {};
    try {
      return await fn();
    } finally {
      console.log = log;
    }
  }

  beforeAll(async () => {
    const server = startRunplane('runpod-sdk', ['start'], { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY }, workDir);
    url = (await server.waitForReady(60_000)).url;
    const sdk = runpodSdk(ADMIN_KEY, { baseUrl: `${url}/v2` });
    busy = sdk.endpoint(await createEndpoint('busy', 1))!;
    idle = sdk.endpoint(await createEndpoint('idle', 0))!;
    // The first job waits for the worker process to start and call in.
    const warm = await quiet(() => busy.runSync({ input: { echo: 'warm' } }, 60_000));
    expect(warm.status).toBe('COMPLETED');
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('run() queues a job and status() reports its output once the worker completed it', async () => {
    const job = await busy.run({ input: { echo: { hello: 'sdk' } } });
    expect(job).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = await busy.status(job.id);
      if (status.completed) break;
      await sleep(100);
    }
    expect(status).toMatchObject({ id: job.id, status: 'COMPLETED', completed: true, succeeded: true, output: { hello: 'sdk' } });
    expect(Number.isInteger(status.delayTime) && Number.isInteger(status.executionTime)).toBe(true);
  });

  it('runSync() returns the output; a failing handler reports FAILED with its error', async () => {
    const ok: any = await quiet(() => busy.runSync({ input: { echo: [1, 2, 3] } }, 30_000));
    expect(ok).toMatchObject({ status: 'COMPLETED', succeeded: true, output: [1, 2, 3] });
    const failed: any = await quiet(() => busy.runSync({ input: { fail: 'bad input' } }, 30_000));
    expect(failed).toMatchObject({ status: 'FAILED', succeeded: false, error: 'bad input' });
  });

  it('statusSync() blocks until a running job is final', async () => {
    const job = await busy.run({ input: { sleep_ms: 1000, echo: 'later' } });
    const status: any = await busy.statusSync(job.id, 20_000);
    expect(status).toMatchObject({ status: 'COMPLETED', output: 'later' });
  });

  it('stream() yields each chunk once, in order, and ends when the job is final', async () => {
    const job = await busy.run({ input: { stream: 4, interval_ms: 100 } });
    const chunks: unknown[] = [];
    for await (const chunk of busy.stream(job.id)) chunks.push(chunk);
    expect(chunks).toEqual([0, 1, 2, 3].map((i) => ({ output: { i } })));
  });

  it('cancel(), health() and purgeQueue() on an endpoint without workers', async () => {
    const first = await idle.run({ input: { echo: 1 } });
    const cancelled = await idle.cancel(first.id);
    expect(cancelled).toMatchObject({ id: first.id, status: 'CANCELLED' });
    await idle.run({ input: { echo: 2 } });
    await idle.run({ input: { echo: 3 } });
    const health = await idle.health();
    expect(health.jobs).toMatchObject({ inQueue: 2, inProgress: 0 });
    expect(health.workers).toMatchObject({ idle: 0, running: 0 });
    expect(await idle.purgeQueue()).toEqual({ removed: 2, status: 'completed' });
    expect((await idle.health()).jobs.inQueue).toBe(0);
  });

  it('health() of the busy endpoint counts its worker and the jobs it completed', async () => {
    const health = await busy.health();
    expect(health.workers.idle + health.workers.running).toBe(1);
    expect(health.jobs.completed).toBeGreaterThanOrEqual(5);
    expect(health.jobs.failed).toBe(1);
  });
});
