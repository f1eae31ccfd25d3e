import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PodApiRpc,
  PodRpc,
  RunplaneError,
  TemplateRpc,
  type Pod,
  type StartWorkerRequest,
  type Template,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { ComputeProvider } from '../src/compute/compute-provider.js';
import { GpuAllocator } from '../src/gpus/gpu-allocator.js';
import { HostGpus } from '../src/gpus/host-gpus.js';
import { podRestService } from '../src/index.js';
import { PodsRepository } from '../src/pods/pods.repository.js';
import { waitFor, writeFixture } from './worker-fixture.js';

const OWNER = 'usr_admin'; // the bootstrap admin key's user
const GPU_0 = 'GPU-0c0ffee0-0000-4000-8000-000000000000';
const GPU_1 = 'GPU-1c0ffee1-1111-4111-8111-111111111111';
// Two made-up GPUs of a model the shipped catalogue does not list.
const RUNPLANE_GPUS = `0, ${GPU_0}, NVIDIA Z100 96GB, 98304 MiB; 1, ${GPU_1}, NVIDIA Z100 96GB, 98304 MiB`;

/**
 * A host with two GPUs (RUNPLANE_GPUS: GPUs cannot be had on the test machine) through the
 * public API: each GPU Pod gets whole GPUs of its own, CPU Pods none, a Pod that finds none free
 * waits and starts when one is freed, more than the host has is refused; worker starts answer
 * the shortage; the catalogue and the machine show the host's GPUs.
 */
describe('GPUs of the host, handed out whole and exclusively (local provider)', () => {
  let server: TestServer;
  let compute: ComputeProvider;
  let repo: PodsRepository;
  let fixture: string;

  const call = (method: string, p: string, body?: unknown) => server.call(method, p, body);
  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v1/pods', {
      imageName: 'acme/cuda:1',
      dockerStartCmd: [process.execPath, fixture],
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body as Pod;
  };
  const get = async (id: string) => (await call('GET', `/v1/pods/${id}`)).body as Pod;
  /** The environment the Pod's current run sees (its fixture prints it). */
  const envOf = async (id: string) => {
    const ref = (await repo.findById(id))!.computeRef!;
    const line = await waitFor(
      async () =>
        (await compute.logs(ref)).find((l) => l.stream === 'stdout' && l.text.startsWith('{')),
      `the env line of ${ref}`,
    );
    return (JSON.parse(line.text) as { env: Record<string, string> }).env;
  };
  const startWorker = (workerId: string, extra: Partial<StartWorkerRequest> = {}) =>
    server.bus.request(PodRpc.startWorker, {
      ownerId: OWNER,
      workerId,
      endpointId: 'ep-gpu',
      templateId: 'tpl-gpu',
      slsVersion: 1,
      env: { RUNPOD_POD_ID: workerId },
      computeType: 'GPU',
      gpuCount: 1,
      ...extra,
    });

  beforeAll(async () => {
    fixture = writeFixture();
    server = await startTestServer([secretsVaultService, podRestService], { RUNPLANE_GPUS });
    compute = server.app.get(ComputeProvider, { strict: false });
    repo = server.app.get(PodsRepository, { strict: false });
    const template: Template = {
      id: 'tpl-gpu',
      name: 'tpl-gpu',
      imageName: 'acme/worker:1',
      category: 'NVIDIA',
      containerDiskInGb: 5,
      dockerEntrypoint: [],
      dockerStartCmd: [process.execPath, fixture],
      earned: 0,
      env: {},
      isPublic: false,
      isRunpod: false,
      isServerless: true,
      ports: [],
      readme: '',
      runtimeInMin: 0,
      volumeInGb: 0,
      volumeMountPath: '/workspace',
    };
    await server.bus.serve(TemplateRpc.get, async ({ templateId }) => {
      if (templateId !== template.id)
        throw RunplaneError.notFound(`template ${templateId} not found`, 'TEMPLATE_NOT_FOUND');
      return template;
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('each GPU Pod sees exactly its own GPU, a CPU Pod none; the third GPU Pod waits until one stops, then gets the freed GPU', async () => {
    const a = await create({ name: 'a' });
    const b = await create({ name: 'b', gpuCount: 1 });
    expect(a).toMatchObject({ desiredStatus: 'RUNNING', gpuCount: 1 });
    const [envA, envB] = [await envOf(a.id), await envOf(b.id)];
    expect(envA.CUDA_VISIBLE_DEVICES).toBe(GPU_0);
    expect(envA.NVIDIA_VISIBLE_DEVICES).toBe(GPU_0);
    expect(envB.CUDA_VISIBLE_DEVICES).toBe(GPU_1);
    expect((await repo.findById(a.id))!.gpuIds).toEqual([GPU_0]);

    // A CPU Pod runs at once, and sees no GPU (the user's own CUDA_VISIBLE_DEVICES does not win).
    const cpu = await create({
      name: 'cpu',
      computeType: 'CPU',
      env: { CUDA_VISIBLE_DEVICES: GPU_0 },
    });
    const envCpu = await envOf(cpu.id);
    expect(envCpu.CUDA_VISIBLE_DEVICES).toBe('');
    expect(envCpu.NVIDIA_VISIBLE_DEVICES).toBeUndefined();

    const c = await create({ name: 'c', env: { CUDA_VISIBLE_DEVICES: GPU_0 } });
    expect(c).toMatchObject({
      desiredStatus: 'RUNNING',
      lastStatusChange: expect.stringMatching(/^Waiting for GPUs \(needs 1, 0 of 2 free\): /),
    });
    expect((await repo.findById(c.id))!).toMatchObject({ computeRef: null, gpuIds: [] });
    // Starting it again changes nothing; it still waits.
    const again = await call('POST', `/v1/pods/${c.id}/start`);
    expect(again.body).toMatchObject({
      lastStatusChange: expect.stringMatching(/^Waiting for GPUs/),
    });

    const stopped = await call('POST', `/v1/pods/${a.id}/stop`);
    expect(stopped.body).toMatchObject({ desiredStatus: 'EXITED' });
    expect((await repo.findById(a.id))!.gpuIds).toEqual([]);
    await waitFor(
      async () => (await get(c.id)).lastStatusChange.startsWith('Started'),
      'the waiting Pod to start',
    );
    const envC = await envOf(c.id);
    expect(envC.CUDA_VISIBLE_DEVICES).toBe(GPU_0);

    // The stopped Pod started again waits in turn, until the CPU Pod's end frees... nothing: it
    // held no GPU. Stopping it while it waits leaves it EXITED saying so.
    const restarted = await call('POST', `/v1/pods/${a.id}/start`);
    expect(restarted.body).toMatchObject({
      desiredStatus: 'RUNNING',
      lastStatusChange: expect.stringMatching(/^Waiting for GPUs \(needs 1, 0 of 2 free\)/),
    });
    await call('POST', `/v1/pods/${cpu.id}/stop`);
    expect((await get(a.id)).lastStatusChange).toMatch(/^Waiting for GPUs/);
    const given = await call('POST', `/v1/pods/${a.id}/stop`);
    expect(given.body).toMatchObject({
      desiredStatus: 'EXITED',
      lastStatusChange: expect.stringMatching(/^Stopped \(while waiting for GPUs\): /),
    });

    // Deleting a running GPU Pod frees its GPU as well.
    expect((await call('DELETE', `/v1/pods/${b.id}`)).status).toBe(204);
    expect((await repo.findById(b.id))!.gpuIds).toEqual([]);
    expect((await call('DELETE', `/v1/pods/${c.id}`)).status).toBe(204);
    expect(await repo.gpuIdsInUse()).toEqual([]);
  });

  it('more GPUs than the host has: 400 NOT_ENOUGH_GPUS naming gpuCount, nothing created', async () => {
    const before = (await call('GET', '/v1/pods')).body.length;
    const res = await call('POST', '/v1/pods', {
      imageName: 'acme/cuda:1',
      dockerStartCmd: [process.execPath, fixture],
      gpuCount: 3,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'NOT_ENOUGH_GPUS',
      message: expect.stringContaining('this machine has 2 GPUs'),
      details: [{ path: 'gpuCount', message: 'must be at most 2 on this machine' }],
    });
    expect((await call('GET', '/v1/pods')).body.length).toBe(before);
  });

  it("the allocation is the Pods' rows: a restarted pod-rest (a new allocator) never hands out a GPU a running workload holds", async () => {
    const a = await create({ name: 'held' });
    await envOf(a.id);
    const restarted = new GpuAllocator(server.app.get(HostGpus, { strict: false }), repo);
    expect(await restarted.shortage(2)).toEqual({ needed: 2, free: 1, total: 2 });
    const claim = await restarted.claim(1, async () => undefined);
    expect(claim).toEqual({ ids: [GPU_1] });
    await call('DELETE', `/v1/pods/${a.id}`);
  });

  it('a worker start on busy GPUs answers the shortage and records nothing; one that fits runs on its GPUs', async () => {
    const holders = [await create({ name: 'h1' }), await create({ name: 'h2' })];
    expect(await startWorker('wk-gpu-busy')).toEqual({
      gpuShortage: { needed: 1, free: 0, total: 2 },
    });
    expect(await repo.findById('wk-gpu-busy')).toBeNull();
    expect(await startWorker('wk-gpu-big', { gpuCount: 4 })).toEqual({
      gpuShortage: { needed: 4, free: 0, total: 2 },
    });
    await call('DELETE', `/v1/pods/${holders[1].id}`);
    expect(await startWorker('wk-gpu-ok')).toEqual({ podId: 'wk-gpu-ok' });
    expect((await envOf('wk-gpu-ok')).CUDA_VISIBLE_DEVICES).toBe(GPU_1);
    // A CPU worker needs none.
    expect(await startWorker('wk-cpu', { computeType: 'CPU', gpuCount: undefined })).toEqual({
      podId: 'wk-cpu',
    });
    expect((await envOf('wk-cpu')).CUDA_VISIBLE_DEVICES).toBe('');
    await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId: 'wk-gpu-ok' });
    await waitFor(async () => (await repo.findById('wk-gpu-ok'))?.exitedAt, 'the worker to stop');
    expect((await repo.findById('wk-gpu-ok'))!.gpuIds).toEqual([]);
    await call('DELETE', `/v1/pods/${holders[0].id}`);
  });

  it('the catalogue and the machine show the host GPUs: the unknown model is a GPU type and the default', async () => {
    const pod = await create({ name: 'typed' });
    expect(pod).toMatchObject({
      gpuTypeId: 'NVIDIA Z100 96GB',
      gpu: expect.objectContaining({ id: 'NVIDIA Z100 96GB', displayName: 'Z100 96GB' }),
      costPerHr: 0,
    });
    const withMachine = (await call('GET', `/v1/pods/${pod.id}?includeMachine=true`)).body;
    expect(withMachine.machine).toMatchObject({
      gpuTypeId: 'NVIDIA Z100 96GB',
      gpuAvailable: 2,
      gpuDisplayName: 'Z100 96GB',
    });
    // GraphQL's gpuTypes (through the bus) lists it with the operator's types.
    const offers = await server.bus.request(PodApiRpc.gpuTypes, {});
    expect(offers.map((o) => o.id)).toEqual(
      expect.arrayContaining(['NVIDIA GeForce RTX 4090', 'NVIDIA Z100 96GB']),
    );
    await call('DELETE', `/v1/pods/${pod.id}`);
  });
});
