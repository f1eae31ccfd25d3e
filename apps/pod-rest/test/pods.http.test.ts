import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PodRpc, VaultRpc, type Pod, type Template } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { templateGraphqlService } from '@runplane/template-graphql';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadCatalogueFile } from '../src/catalogue/catalogue.service.js';
import { ComputeProvider } from '../src/compute/compute-provider.js';
import { podRestService } from '../src/index.js';
import { DEFAULT_CATALOGUE_FILE } from '../src/settings.js';
import { FakeKubernetes } from './fake-kubernetes.js';
import { isAlive, waitFor, writeFixture } from './worker-fixture.js';

const OWNER = 'usr_admin'; // the bootstrap admin key's user
const SECRET_VALUE = 'pod-secret-9f3$&value';
const dir = mkdtempSync(path.join(tmpdir(), 'runplane-pods-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The default catalogue plus a machine entry for this host, a network volume and a savings plan of the admin. */
function catalogueFile(): string {
  const c = loadCatalogueFile(DEFAULT_CATALOGUE_FILE);
  const doc = {
    ...JSON.parse(JSON.stringify(c)),
    machines: [
      {
        id: hostname(),
        location: 'Test Lab',
        dataCenterId: 'LAB-1',
        maxDownloadSpeedMbps: 1000,
        note: 'the test host',
      },
    ],
    networkVolumes: [{ id: 'nv-models', name: 'models', size: 100, claimName: 'models-pvc' }],
    savingsPlans: [
      {
        id: 'sp-4090',
        userId: OWNER,
        gpuTypeId: 'NVIDIA GeForce RTX 4090',
        costPerHr: 0.5,
        startTime: '2020-01-01T00:00:00Z',
        endTime: '2999-01-01T00:00:00Z',
      },
    ],
  };
  const file = path.join(dir, 'catalogue.yaml');
  writeFileSync(file, stringify(doc));
  return file;
}

describe('REST v1 /v1/pods with the local compute provider', () => {
  let server: TestServer;
  let compute: ComputeProvider;
  let fixture: string;
  let bobKey: string;

  const call = (method: string, p: string, body?: unknown, key?: string) =>
    server.call(method, p, body, key ? { authorization: `Bearer ${key}` } : {});
  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v1/pods', {
      name: 'pod',
      imageName: 'acme/app:1',
      dockerStartCmd: [process.execPath, fixture],
      ports: ['8888/http'],
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body as Pod;
  };
  const pidOf = async (pod: Pod) => (await compute.status((await pods(pod.id)).computeRef!))?.pid;
  const pods = async (id: string) =>
    (await server.app
      .get((await import('../src/pods/pods.repository.js')).PodsRepository, { strict: false })
      .findById(id))!;
  const envOf = async (pod: Pod) => {
    const ref = (await pods(pod.id)).computeRef!;
    const line = await waitFor(
      async () =>
        (await compute.logs(ref)).find((l) => l.stream === 'stdout' && l.text.startsWith('{')),
      'the env line',
    );
    return (JSON.parse(line.text) as { env: Record<string, string> }).env;
  };
  const expectError = (res: { status: number; body: any }, status: number, detailPath?: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status, error: expect.any(String), message: res.body.error });
    if (detailPath)
      expect(res.body.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: detailPath })]),
      );
  };

  beforeAll(async () => {
    fixture = writeFixture();
    server = await startTestServer([secretsVaultService, templateGraphqlService, podRestService], {
      RUNPLANE_CATALOGUE_FILE: catalogueFile(),
    });
    compute = server.app.get(ComputeProvider, { strict: false });
    await server.bus.request(VaultRpc.createSecret, {
      ownerId: OWNER,
      secret: { name: 'api_token', value: SECRET_VALUE },
    });
    const bob = await call('POST', '/v1/users', { name: 'bob' });
    bobKey = (
      await call('POST', '/v1/apikeys', { name: 'bob', userId: bob.body.id, scope: 'readwrite' })
    ).body.key;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("POST creates (201) and runs the command locally: every field of RunPod's Pod, priced from the catalogue", async () => {
    const pod = await create({
      name: 'trainer',
      env: { MODEL: 'tiny', TOKEN: 'Bearer {{ RUNPOD_SECRET_api_token }}' },
      gpuCount: 2,
      containerDiskInGb: 10,
      volumeInGb: 0,
    });
    expect(pod).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{14}$/),
      name: 'trainer',
      adjustedCostPerHr: 1,
      costPerHr: 1.38,
      aiApiId: null,
      endpointId: null,
      slsVersion: null,
      consumerUserId: OWNER,
      containerDiskInGb: 10,
      containerRegistryAuthId: null,
      cpuFlavorId: null,
      desiredStatus: 'RUNNING',
      dockerEntrypoint: [],
      dockerStartCmd: [process.execPath, fixture],
      env: { MODEL: 'tiny', TOKEN: 'Bearer {{ RUNPOD_SECRET_api_token }}' },
      gpu: expect.objectContaining({
        id: 'NVIDIA GeForce RTX 4090',
        count: 2,
        displayName: 'RTX 4090',
        securePrice: 0.69,
      }),
      image: 'acme/app:1',
      imageName: 'acme/app:1',
      interruptible: false,
      lastStartedAt: expect.any(String),
      lastStatusChange: expect.stringMatching(/^Started: /),
      locked: false,
      machineId: hostname(),
      memoryInGb: 82,
      portMappings: { 8888: 8888 },
      ports: ['8888/http'],
      publicIp: expect.any(String),
      templateId: null,
      vcpuCount: 12,
      volumeEncrypted: false,
      volumeInGb: 0,
      volumeMountPath: '/workspace',
      networkVolumeId: null,
      gpuTypeId: 'NVIDIA GeForce RTX 4090',
      gpuCount: 2,
      createdAt: expect.any(String),
    });
    // The process has the Pod's env with the secret resolved, and RUNPOD_POD_ID; the API shows the reference only.
    const env = await envOf(pod);
    expect(env).toMatchObject({
      MODEL: 'tiny',
      TOKEN: `Bearer ${SECRET_VALUE}`,
      RUNPOD_POD_ID: pod.id,
    });
    expect(JSON.stringify((await call('GET', `/v1/pods/${pod.id}`)).body)).not.toContain(
      SECRET_VALUE,
    );
    expect(JSON.stringify(await pods(pod.id))).not.toContain(SECRET_VALUE);
  });

  it('GET /v1/pods/{id}: machine, network volume, savings plans and template only with their flags', async () => {
    const tpl = (
      await call('POST', '/v1/templates', {
        name: `pod-tpl-${Date.now()}`,
        imageName: 'acme/from-template:2',
        dockerStartCmd: [process.execPath, fixture],
        env: { FROM: 'template', OVER: 'template' },
        ports: ['7000/tcp'],
        containerDiskInGb: 7,
        volumeInGb: 3,
        volumeMountPath: '/data',
      })
    ).body as Template;
    const res = await call('POST', '/v1/pods', {
      templateId: tpl.id,
      env: { OVER: 'pod' },
      networkVolumeId: 'nv-models',
    });
    expect(res.status).toBe(201);
    const pod = res.body as Pod;
    // From the template: image, command, env (the Pod's own on top), ports, disks.
    expect(pod).toMatchObject({
      templateId: tpl.id,
      image: 'acme/from-template:2',
      dockerStartCmd: [process.execPath, fixture],
      env: { FROM: 'template', OVER: 'pod' },
      ports: ['7000/tcp'],
      containerDiskInGb: 7,
      volumeInGb: 3,
      volumeMountPath: '/data',
      networkVolumeId: 'nv-models',
    });
    expect(await envOf(pod)).toMatchObject({ FROM: 'template', OVER: 'pod' });

    const plain = (await call('GET', `/v1/pods/${pod.id}`)).body;
    for (const k of ['machine', 'networkVolume', 'savingsPlans', 'template'])
      expect(plain[k]).toBeUndefined();
    const all = (
      await call(
        'GET',
        `/v1/pods/${pod.id}?includeMachine=true&includeNetworkVolume=true&includeSavingsPlans=true&includeTemplate=true`,
      )
    ).body;
    expect(all.machine).toMatchObject({
      location: 'Test Lab',
      dataCenterId: 'LAB-1',
      maxDownloadSpeedMbps: 1000,
      note: 'the test host',
      cpuCount: expect.any(Number),
      memoryInGb: expect.any(Number),
      gpuTypeId: 'NVIDIA GeForce RTX 4090',
      gpuAvailable: 0,
      currentPricePerGpu: 0.69,
    });
    expect(all.networkVolume).toEqual({
      id: 'nv-models',
      name: 'models',
      size: 100,
      dataCenterId: 'LOCAL-1',
    });
    expect(all.savingsPlans).toEqual([
      {
        id: 'sp-4090',
        podId: pod.id,
        gpuTypeId: 'NVIDIA GeForce RTX 4090',
        costPerHr: 0.5,
        startTime: '2020-01-01T00:00:00.000Z',
        endTime: '2999-01-01T00:00:00.000Z',
      },
    ]);
    expect(all.template).toMatchObject({ id: tpl.id, name: tpl.name });
    // No plan for CPU Pods: an empty list, not an absent field.
    const cpu = await create({ computeType: 'CPU', vcpuCount: 4 });
    expect((await call('GET', `/v1/pods/${cpu.id}?includeSavingsPlans=1`)).body).toMatchObject({
      savingsPlans: [],
      costPerHr: 0.12,
      adjustedCostPerHr: 0.12,
      gpu: null,
      cpuFlavorId: 'cpu3c',
      memoryInGb: 8,
    });
    expectError(
      await call('GET', `/v1/pods/${pod.id}?includeMachine=maybe`),
      400,
      'includeMachine',
    );
  });

  it('env names like constructor, toString, valueOf, hasOwnProperty are kept in templates and Pods and reach the process; __proto__ is a 400 naming it', async () => {
    // Object literals with these names as own keys (JSON.stringify sends them all).
    const odd = {
      constructor: 'c',
      toString: 't',
      valueOf: 'v',
      hasOwnProperty: 'h',
      prototype: 'p',
    };
    const tpl = await call('POST', '/v1/templates', {
      name: `odd-env-${Date.now().toString(36)}`,
      imageName: 'acme/app:1',
      env: { ...odd, FROM_TEMPLATE: '1' },
    });
    expect(tpl.status).toBe(200);
    expect(tpl.body.env).toEqual({ ...odd, FROM_TEMPLATE: '1' });
    expect((await call('GET', `/v1/templates/${tpl.body.id}`)).body.env).toEqual({
      ...odd,
      FROM_TEMPLATE: '1',
    });

    // A secret reference sends the whole map through the vault on its way to the process.
    const secret = 'Bearer {{ RUNPOD_SECRET_api_token }}';
    const pod = await create({ templateId: tpl.body.id, env: { valueOf: secret, POD_ONLY: '1' } });
    const expected = { ...odd, valueOf: secret, FROM_TEMPLATE: '1', POD_ONLY: '1' };
    expect(pod.env).toEqual(expected);
    expect((await call('GET', `/v1/pods/${pod.id}`)).body.env).toEqual(expected);
    expect(await envOf(pod)).toMatchObject({ ...expected, valueOf: `Bearer ${SECRET_VALUE}` });
    await call('DELETE', `/v1/pods/${pod.id}`);

    const changed = await call('PATCH', `/v1/templates/${tpl.body.id}`, {
      env: { toString: 't2' },
    });
    expect(changed.body.env).toEqual({ toString: 't2' });

    for (const route of ['/v1/templates', '/v1/pods']) {
      const body = `{"name":"proto-env","imageName":"acme/app:1","env":{"__proto__":"x"}}`;
      const res = await call('POST', route, JSON.parse(body));
      expectError(res, 400);
      expect(res.body.error).toMatch(/__proto__/);
    }
    expect(
      (await call('GET', '/v1/templates')).body.some((t: Template) => t.name === 'proto-env'),
    ).toBe(false);
    expect((await call('GET', '/v1/pods')).body.some((p: Pod) => p.name === 'proto-env')).toBe(
      false,
    );
  });

  it('validates bodies with clear 400s; nothing is created', async () => {
    const before = (await call('GET', '/v1/pods')).body.length;
    expectError(
      await call('POST', '/v1/pods', {
        name: 'n'.repeat(192),
        imageName: 'x:1',
        dockerStartCmd: ['true'],
      }),
      400,
      'name',
    );
    expectError(await call('POST', '/v1/pods', { dockerStartCmd: ['true'] }), 400, 'imageName');
    expectError(await call('POST', '/v1/pods', { imageName: 'x:1' }), 400, 'dockerStartCmd');
    expectError(
      await call('POST', '/v1/pods', {
        imageName: 'x:1',
        dockerStartCmd: ['true'],
        gpuTypeIds: ['NVIDIA B300'],
      }),
      400,
      'gpuTypeIds',
    );
    expectError(
      await call('POST', '/v1/pods', { templateId: 'tpl-missing', dockerStartCmd: ['true'] }),
      400,
      'templateId',
    );
    expectError(
      await call('POST', '/v1/pods', {
        imageName: 'x:1',
        dockerStartCmd: ['true'],
        networkVolumeId: 'nv-nope',
      }),
      400,
      'networkVolumeId',
    );
    expectError(
      await call('POST', '/v1/pods', {
        imageName: 'x:1',
        dockerStartCmd: ['true'],
        ports: ['80/udp'],
      }),
      400,
      'ports',
    );
    expectError(
      await call('POST', '/v1/pods', { imageName: 'x:1', dockerStartCmd: 'true' }),
      400,
      'dockerStartCmd',
    );
    expectError(
      await call('POST', '/v1/pods', {
        imageName: 'x:1',
        dockerStartCmd: ['true'],
        env: { K: '{{ RUNPOD_SECRET_nope }}' },
      }),
      400,
    );
    expect((await call('GET', '/v1/pods')).body.length).toBe(before);
    expect(
      (
        await call('POST', '/v1/pods', {
          name: 'n'.repeat(191),
          imageName: 'x:1',
          dockerStartCmd: [process.execPath, fixture],
        })
      ).status,
    ).toBe(201);
  });

  it('stop, start, restart and reset answer the Pod; locked refuses stop and reset; updates restart only for what runs', async () => {
    const pod = await create({ locked: true });
    const pid1 = await pidOf(pod);
    expect(isAlive(pid1!)).toBe(true);
    for (const action of ['stop', 'reset']) {
      const res = await call('POST', `/v1/pods/${pod.id}/${action}`);
      expectError(res, 409);
      expect(res.body).toMatchObject({
        code: 'POD_LOCKED',
        message: expect.stringContaining('is locked'),
      });
    }
    expect(isAlive(pid1!)).toBe(true);
    // Restart is allowed while locked: a new process.
    const restarted = (await call('POST', `/v1/pods/${pod.id}/restart`)).body;
    expect(restarted).toMatchObject({ id: pod.id, desiredStatus: 'RUNNING' });
    const pid2 = await pidOf(pod);
    expect(pid2).not.toBe(pid1);
    expect(isAlive(pid1!)).toBe(false);

    expect(
      (await call('PATCH', `/v1/pods/${pod.id}`, { locked: false, name: 'renamed' })).body,
    ).toMatchObject({ locked: false, name: 'renamed' });
    expect(await pidOf(pod)).toBe(pid2); // a rename does not restart
    await envOf(pod); // its SIGTERM handler is installed once it printed its env
    const stopped = (await call('POST', `/v1/pods/${pod.id}/stop`)).body;
    expect(stopped).toMatchObject({
      id: pod.id,
      desiredStatus: 'EXITED',
      portMappings: {},
      publicIp: null,
      lastStatusChange: expect.stringMatching(/^Stopped \(exit code 0\): /),
    });
    expect(isAlive(pid2!)).toBe(false);
    expect((await call('POST', `/v1/pods/${pod.id}/stop`)).body).toMatchObject({
      desiredStatus: 'EXITED',
    }); // again: same answer

    const started = (await call('POST', `/v1/pods/${pod.id}/start`)).body;
    expect(started).toMatchObject({ desiredStatus: 'RUNNING', portMappings: { 8888: 8888 } });
    const pid3 = await pidOf(pod);
    expect((await call('POST', `/v1/pods/${pod.id}/start`)).body).toMatchObject({
      desiredStatus: 'RUNNING',
    });
    expect(await pidOf(pod)).toBe(pid3); // start of a running Pod changes nothing

    const reset = (await call('POST', `/v1/pods/${pod.id}/reset`)).body;
    expect(reset).toMatchObject({ desiredStatus: 'RUNNING' });
    const pid4 = await pidOf(pod);
    expect(pid4).not.toBe(pid3);

    // POST .../update changing what runs restarts it with the new settings.
    const updated = (await call('POST', `/v1/pods/${pod.id}/update`, { env: { NEW: 'yes' } })).body;
    expect(updated).toMatchObject({ env: { NEW: 'yes' }, desiredStatus: 'RUNNING' });
    expect(await pidOf(pod)).not.toBe(pid4);
    expect(await envOf(pod)).toMatchObject({ NEW: 'yes' });
    expectError(await call('PATCH', `/v1/pods/${pod.id}`, { name: 'x'.repeat(192) }), 400, 'name');
  });

  it('a process that ends by itself leaves the Pod EXITED with its exit code; start runs it again', async () => {
    const pod = await create({ env: { FIXTURE_MODE: 'exit', FIXTURE_EXIT_CODE: '4' } });
    const exited = await waitFor(async () => {
      const b = (await call('GET', `/v1/pods/${pod.id}`)).body;
      return b.desiredStatus === 'EXITED' && b;
    }, 'the exit');
    expect(exited.lastStatusChange).toMatch(/^Exited \(exit code 4\): /);
    expect((await call('POST', `/v1/pods/${pod.id}/start`)).body).toMatchObject({
      desiredStatus: 'RUNNING',
    });
  });

  it('delete stops the process and answers 204; the Pod is gone for the API but still counts for its template until it stopped', async () => {
    const tpl = (
      await call('POST', '/v1/templates', {
        name: `del-tpl-${Date.now()}`,
        imageName: 'x:1',
        dockerStartCmd: [process.execPath, fixture],
      })
    ).body as Template;
    const pod = (await call('POST', '/v1/pods', { templateId: tpl.id })).body as Pod;
    const pid = await pidOf(pod);
    expect((await server.bus.request(PodRpc.templateUsage, { templateId: tpl.id })).pods).toBe(1);
    const del = await call('DELETE', `/v1/pods/${pod.id}`);
    expect(del.status).toBe(204);
    expect(isAlive(pid!)).toBe(false);
    expectError(await call('GET', `/v1/pods/${pod.id}`), 404);
    expectError(await call('DELETE', `/v1/pods/${pod.id}`), 404);
    expectError(await call('POST', `/v1/pods/${pod.id}/start`), 404);
    expect((await call('GET', '/v1/pods')).body.some((p: Pod) => p.id === pod.id)).toBe(false);
    const usage = await server.bus.request(PodRpc.templateUsage, { templateId: tpl.id });
    expect(usage).toEqual({ pods: 0, lastUsedAt: expect.any(String) });
  });

  it("lists Pods as a bare array with filters; serverless worker Pods only with includeWorkers, and they are the autoscaler's", async () => {
    const tpl = (
      await call('POST', '/v1/templates', {
        name: `worker-tpl-${Date.now()}`,
        imageName: 'w:1',
        isServerless: true,
        volumeInGb: 0,
        dockerStartCmd: [process.execPath, fixture],
      })
    ).body as Template;
    const workerId = `wk${Date.now()}`;
    await server.bus.request(PodRpc.startWorker, {
      ownerId: OWNER,
      workerId,
      endpointId: 'ep-list',
      templateId: tpl.id,
      slsVersion: 4,
      env: { RUNPOD_POD_ID: workerId },
      computeType: 'CPU',
      vcpuCount: 2,
    });
    const mine = await create({ name: 'listed-one' });

    const list = (await call('GET', '/v1/pods')).body as Pod[];
    expect(Array.isArray(list)).toBe(true);
    expect(list.some((p) => p.id === mine.id)).toBe(true);
    expect(list.some((p) => p.id === workerId)).toBe(false);
    expect(
      (await call('GET', '/v1/pods?includeWorkers=true')).body.find((p: Pod) => p.id === workerId),
    ).toMatchObject({
      endpointId: 'ep-list',
      aiApiId: 'ep-list',
      slsVersion: 4,
      cpuFlavorId: 'cpu3c',
      vcpuCount: 2,
      costPerHr: 0.06,
    });
    expect((await call('GET', '/v1/pods?name=listed-one')).body.map((p: Pod) => p.id)).toEqual([
      mine.id,
    ]);
    expect((await call('GET', '/v1/pods?endpointId=ep-list')).body.map((p: Pod) => p.id)).toEqual([
      workerId,
    ]);
    expect((await call('GET', '/v1/pods?desiredStatus=TERMINATED')).body).toEqual([]);
    expectError(await call('GET', '/v1/pods?desiredStatus=ASLEEP'), 400, 'desiredStatus');

    expectError(await call('GET', `/v1/pods/${workerId}`), 404);
    expect((await call('GET', `/v1/pods/${workerId}?includeWorkers=true`)).body).toMatchObject({
      id: workerId,
      endpointId: 'ep-list',
      slsVersion: 4,
      desiredStatus: 'RUNNING',
    });
    const refused = await call('POST', `/v1/pods/${workerId}/stop`);
    expectError(refused, 409);
    expect(refused.body.code).toBe('POD_IS_WORKER');
    await server.bus.request(PodRpc.stopWorker, { ownerId: OWNER, workerId });
  });

  it('at start-up, a deleted Pod whose end was never recorded (server down meanwhile) stops counting as a use of its template', async () => {
    const { PodsRepository } = await import('../src/pods/pods.repository.js');
    const { WorkloadLifecycle } = await import('../src/workloads/workload-lifecycle.js');
    const repo = server.app.get(PodsRepository, { strict: false });
    await repo.insert({
      id: 'ghostpod000001',
      ownerId: OWNER,
      name: 'ghost',
      image: 'x:1',
      templateId: 'tpl-ghost',
      dockerEntrypoint: [],
      dockerStartCmd: ['true'],
      ports: [],
      containerDiskInGb: 1,
      volumeInGb: 0,
      env: {},
      lastStatusChange: '',
    });
    await repo.update('ghostpod000001', {
      desiredStatus: 'TERMINATED',
      deletedAt: new Date(),
      computeRef: 'ghostpod000001-1',
    });
    expect((await server.bus.request(PodRpc.templateUsage, { templateId: 'tpl-ghost' })).pods).toBe(
      1,
    );
    await server.app.get(WorkloadLifecycle, { strict: false }).onApplicationBootstrap();
    expect(await server.bus.request(PodRpc.templateUsage, { templateId: 'tpl-ghost' })).toEqual({
      pods: 0,
      lastUsedAt: expect.any(String),
    });
  });

  it("another user's Pod is 404 on every route and absent from their list", async () => {
    const pod = await create({ name: 'private' });
    const pid = await pidOf(pod);
    for (const [method, p, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'hijack' }],
      ['POST', '/update', { name: 'hijack' }],
      ['DELETE', '', undefined],
      ['POST', '/start', undefined],
      ['POST', '/stop', undefined],
      ['POST', '/restart', undefined],
      ['POST', '/reset', undefined],
    ] as const) {
      expectError(await call(method, `/v1/pods/${pod.id}${p}`, body, bobKey), 404);
    }
    expect((await call('GET', '/v1/pods', undefined, bobKey)).body).toEqual([]);
    expect((await call('GET', `/v1/pods/${pod.id}`)).body).toMatchObject({
      name: 'private',
      desiredStatus: 'RUNNING',
    });
    expect(await pidOf(pod)).toBe(pid);
  });
});

describe('RUNPLANE_LOCAL_POD_PROCESSES=false', () => {
  it('records Pods without running anything', async () => {
    const server = await startTestServer(
      [secretsVaultService, templateGraphqlService, podRestService],
      { RUNPLANE_LOCAL_POD_PROCESSES: 'false' },
    );
    try {
      const marker = path.join(dir, 'must-not-exist');
      const res = await server.call('POST', '/v1/pods', {
        imageName: 'x:1',
        dockerStartCmd: ['touch', marker],
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        desiredStatus: 'EXITED',
        lastStatusChange: expect.stringMatching(
          /^Not started \(this server does not run Pod processes/,
        ),
      });
      // Even without a command (nothing would run anyway).
      expect((await server.call('POST', '/v1/pods', { imageName: 'x:1' })).status).toBe(201);
      expect((await server.call('POST', `/v1/pods/${res.body.id}/start`)).body).toMatchObject({
        desiredStatus: 'EXITED',
      });
      expect((await server.call('POST', `/v1/pods/${res.body.id}/restart`)).body).toMatchObject({
        desiredStatus: 'EXITED',
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(existsSync(marker)).toBe(false);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe('REST v1 /v1/pods with the Kubernetes compute provider (fake API server)', () => {
  const api = new FakeKubernetes();
  let server: TestServer;

  beforeAll(async () => {
    await api.start();
    process.env.KUBECONFIG = api.kubeconfig(dir);
    server = await startTestServer([secretsVaultService, templateGraphqlService, podRestService], {
      RUNPLANE_COMPUTE_PROVIDER: 'kubernetes',
      RUNPLANE_KUBERNETES_NAMESPACE: 'tenants',
      RUNPLANE_BUS_NAMESPACE: 'rp-e2e',
    });
    await server.bus.request(VaultRpc.createSecret, {
      ownerId: OWNER,
      secret: { name: 'k8s_token', value: SECRET_VALUE },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    delete process.env.KUBECONFIG;
    await api.stop();
  });

  it("a Pod becomes a Kubernetes Pod; its watched status becomes the Pod's: waiting, running on a node, exited", async () => {
    const res = await server.call('POST', '/v1/pods', {
      name: 'k8s',
      imageName: 'ghcr.io/acme/app:3',
      ports: ['8888/http'],
      env: { TOKEN: '{{ RUNPOD_SECRET_k8s_token }}', PLAIN: '1' },
      volumeInGb: 5,
    });
    expect(res.status).toBe(201);
    const id = res.body.id;
    // Until it runs: no address, no ports (spec: empty while the Pod initialises).
    expect(res.body).toMatchObject({
      desiredStatus: 'RUNNING',
      publicIp: null,
      portMappings: {},
      machineId: '',
      lastStatusChange: expect.stringMatching(/^Starting: /),
    });
    const k8sPod = api.pods.get(`${id}-1`)!;
    expect(k8sPod.metadata.namespace).toBe('tenants');
    expect(k8sPod.metadata.labels).toMatchObject({
      'runplane.io/installation': 'rp-e2e',
      'runplane.io/pod-id': id,
      'runplane.io/owner': OWNER,
      'app.kubernetes.io/component': 'pod',
    });
    expect(k8sPod.spec.containers[0]).toMatchObject({
      image: 'ghcr.io/acme/app:3',
      env: expect.arrayContaining([
        { name: 'PLAIN', value: '1' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: `${id}-1-env`, key: 'TOKEN' } } },
      ]),
    });
    expect(JSON.stringify(k8sPod)).not.toContain(SECRET_VALUE);
    expect(api.secrets.get(`${id}-1-env`)!.stringData).toEqual({ TOKEN: SECRET_VALUE });
    expect(api.claims.get(`${id}-volume`)!.spec.resources.requests.storage).toBe('5Gi');

    api.update(`${id}-1`, (p) => {
      p.status.containerStatuses = [
        { name: 'main', state: { waiting: { reason: 'ContainerCreating' } } },
      ];
    });
    await waitFor(
      async () =>
        (await server.call('GET', `/v1/pods/${id}`)).body.lastStatusChange.startsWith(
          'Waiting (ContainerCreating)',
        ),
      'the waiting reason on the Pod',
    );
    api.nodes.set('gpu-node-3', {
      metadata: { name: 'gpu-node-3', labels: { 'topology.kubernetes.io/zone': 'zone-b' } },
      status: { capacity: { cpu: '16', memory: '64Gi' } },
    });
    api.run(`${id}-1`, 'gpu-node-3', '10.9.8.7');
    const running = await waitFor(async () => {
      const b = (await server.call('GET', `/v1/pods/${id}?includeMachine=true`)).body;
      return b.publicIp && b;
    }, 'running on its node');
    expect(running).toMatchObject({
      machineId: 'gpu-node-3',
      publicIp: '10.9.8.7',
      portMappings: { 8888: 8888 },
      lastStatusChange: expect.stringMatching(/^Running on gpu-node-3: /),
      machine: { cpuCount: 16, memoryInGb: 64, dataCenterId: 'zone-b' },
    });

    // Stop: the Kubernetes Pod is deleted; the Pod is EXITED.
    const stopped = (await server.call('POST', `/v1/pods/${id}/stop`)).body;
    expect(stopped).toMatchObject({
      desiredStatus: 'EXITED',
      publicIp: null,
      lastStatusChange: expect.stringMatching(/^Stopped \(exit code unknown, deleted\): /),
    });
    expect(api.pods.has(`${id}-1`)).toBe(false);
    // Start: a new run, a new Kubernetes Pod, the same volume.
    expect((await server.call('POST', `/v1/pods/${id}/start`)).body).toMatchObject({
      desiredStatus: 'RUNNING',
    });
    expect(api.pods.get(`${id}-2`)!.spec.volumes).toEqual([
      { name: 'volume', persistentVolumeClaim: { claimName: `${id}-volume` } },
    ]);
    // It dies by itself (OOM): EXITED with the reason.
    api.run(`${id}-2`);
    api.update(`${id}-2`, (p) => {
      p.status.phase = 'Failed';
      p.status.containerStatuses[0].state = {
        terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: new Date().toISOString() },
      };
    });
    const dead = await waitFor(async () => {
      const b = (await server.call('GET', `/v1/pods/${id}`)).body;
      return b.desiredStatus === 'EXITED' && b;
    }, 'the exit');
    expect(dead.lastStatusChange).toMatch(/^Exited \(exit code 137, OOMKilled\): /);
    // Delete: the volume goes too.
    expect((await server.call('DELETE', `/v1/pods/${id}`)).status).toBe(204);
    expect(api.claims.has(`${id}-volume`)).toBe(false);
  }, 60_000);
});
