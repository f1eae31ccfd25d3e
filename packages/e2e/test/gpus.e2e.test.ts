import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import path from 'node:path';
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

const GPU_0 = 'GPU-00e2e000-0000-4000-8000-000000000000';
const GPU_1 = 'GPU-11e2e111-1111-4111-8111-111111111111';
// The test machine has no GPU: the operator override declares two (nvidia-smi's form).
const RUNPLANE_GPUS = `0, ${GPU_0}, NVIDIA L4, 23034 MiB; 1, ${GPU_1}, NVIDIA L4, 23034 MiB`;
/** A Pod that prints the GPUs it may use, then runs until stopped. */
const PRINT_GPUS = [
  process.execPath,
  '-e',
  "console.log('CUDA_VISIBLE_DEVICES=' + process.env.CUDA_VISIBLE_DEVICES); setInterval(() => {}, 1 << 30);",
];

/**
 * GPUs on a standalone server, through the public API only: each GPU Pod gets whole GPUs of its
 * own, a Pod that finds none free waits with a reason and starts when one is freed, and an
 * endpoint whose workers need GPUs the machine cannot give says why its jobs wait.
 */
describe('GPUs of the machine (standalone, RUNPLANE_GPUS)', () => {
  const workDir = tempDir('gpus');
  let server: RunplaneProcess;
  let url: string;

  const call = (method: string, route: string, body?: unknown) =>
    http(method, `${url}${route}`, { key: `Bearer ${ADMIN_KEY}`, body });
  const createPod = async (name: string, gpuCount = 1) => {
    const res = await call('POST', '/v1/pods', {
      name,
      imageName: 'runplane-e2e/cuda:1',
      gpuTypeIds: ['NVIDIA L4'],
      gpuCount,
      dockerStartCmd: PRINT_GPUS,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; desiredStatus: string; lastStatusChange: string };
  };
  /** What the Pod printed about its GPUs (its logs through the API). */
  const seenGpus = (podId: string) =>
    eventually(
      async () => {
        const lines = (await call('GET', `/v1/pods/${podId}/logs`)).body as Array<{ text: string }>;
        return lines
          ?.map((l) => l.text)
          .find((t) => t.startsWith('CUDA_VISIBLE_DEVICES='))
          ?.slice('CUDA_VISIBLE_DEVICES='.length);
      },
      `the GPUs printed by ${podId}`,
      60_000,
    );
  const reason = (ep: string, code: string) =>
    eventually(
      async () =>
        ((await call('GET', `/v1/endpoints/${ep}`)).body?.waiting?.reasons ?? []).find(
          (r: { code: string }) => r.code === code,
        ),
      `${code} on ${ep}`,
      90_000,
    );
  const endpointNeeding = async (gpuCount: number) => {
    const t = await call('POST', '/v1/templates', {
      name: `gpu-worker-${gpuCount}-${Date.now()}`,
      imageName: 'runplane-e2e/worker:1',
      isServerless: true,
      dockerStartCmd: PRINT_GPUS,
    });
    expect(t.status).toBe(200);
    const e = await call('POST', '/v1/endpoints', {
      name: `needs-${gpuCount}`,
      templateId: t.body.id,
      computeType: 'GPU',
      gpuTypeIds: ['NVIDIA L4'],
      gpuCount,
      workersMin: 0,
      workersMax: 1,
    });
    expect(e.status).toBe(200);
    const run = await call('POST', `/v2/${e.body.id}/run`, { input: {} });
    expect(run.status).toBe(200);
    return e.body.id as string;
  };

  beforeAll(async () => {
    server = startRunplane(
      'gpus',
      ['start'],
      {
        RUNPLANE_DATA_DIR: path.join(workDir, 'data'),
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_GPUS,
      },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('each Pod sees exactly its GPU; the third waits with a reason and gets the GPU the first one frees', async () => {
    const first = await createPod('first');
    const second = await createPod('second');
    const [a, b] = [await seenGpus(first.id), await seenGpus(second.id)];
    expect([a, b].sort()).toEqual([GPU_0, GPU_1]);

    const third = await createPod('third');
    expect(third).toMatchObject({
      desiredStatus: 'RUNNING',
      lastStatusChange: expect.stringMatching(/^Waiting for GPUs \(needs 1, 0 of 2 free\): /),
    });
    expect((await call('GET', `/v1/pods/${third.id}/logs`)).body).toEqual([]);

    // More than the machine has can never run: refused, not left waiting.
    const tooMany = await call('POST', '/v1/pods', {
      imageName: 'runplane-e2e/cuda:1',
      gpuCount: 3,
      dockerStartCmd: PRINT_GPUS,
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'NOT_ENOUGH_GPUS' });

    // An endpoint whose worker needs a GPU while both are taken: its job waits, saying why.
    const busyEp = await endpointNeeding(1);
    expect(await reason(busyEp, 'GPUS_BUSY')).toMatchObject({
      gpusNeeded: 1,
      gpusFree: 0,
      gpusTotal: 2,
      message: expect.stringContaining('0 of the machine'),
    });
    const neverEp = await endpointNeeding(4);
    expect(await reason(neverEp, 'NOT_ENOUGH_GPUS')).toMatchObject({
      gpusNeeded: 4,
      gpusTotal: 2,
    });
    // Neither endpoint's jobs may take the freed GPU first: delete them.
    for (const ep of [busyEp, neverEp])
      expect((await call('DELETE', `/v1/endpoints/${ep}`)).status).toBe(204);

    const stopped = await call('POST', `/v1/pods/${first.id}/stop`);
    expect(stopped.body.desiredStatus).toBe('EXITED');
    expect(await seenGpus(third.id)).toBe(a);
    const started = (await call('GET', `/v1/pods/${third.id}`)).body;
    expect(started.lastStatusChange).toMatch(/^Started: /);
  }, 240_000);
});
