import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NetworkVolume, Pod } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { templateGraphqlService } from '@runplane/template-graphql';
import { ComputeProvider, type WorkloadSpec } from '../src/compute/compute-provider.js';
import { podRestService } from '../src/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeKubernetes } from './fake-kubernetes.js';
import { writeFixture } from './worker-fixture.js';

/** REST v1 /v1/networkvolumes (the default catalogue: one data center, LOCAL-1) and Pods mounting them. */
describe('REST v1 /v1/networkvolumes', () => {
  let server: TestServer;
  let bobKey: string;
  let fixture: string;
  const call = (method: string, p: string, body?: unknown, key?: string) =>
    server.call(method, p, body, key ? { authorization: `Bearer ${key}` } : {});
  const expectError = (res: { status: number; body: any }, status: number, path?: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status, error: expect.any(String), message: res.body.error });
    if (path) expect(res.body.details).toEqual([expect.objectContaining({ path })]);
  };
  const createVolume = async (body: Record<string, unknown> = {}, key?: string) => {
    const res = await call(
      'POST',
      '/v1/networkvolumes',
      { name: 'data', size: 20, dataCenterId: 'LOCAL-1', ...body },
      key,
    );
    expect(res.status).toBe(200);
    return res.body as NetworkVolume;
  };

  beforeAll(async () => {
    fixture = writeFixture();
    // Bob may run commands here (the operator's opt-in): his Pod is refused for the volume alone.
    server = await startTestServer([secretsVaultService, templateGraphqlService, podRestService], {
      RUNPLANE_LOCAL_RUN_USERS: 'all',
    });
    const bob = await call('POST', '/v1/users', { name: 'bob' });
    bobKey = (
      await call('POST', '/v1/apikeys', { name: 'bob', userId: bob.body.id, scope: 'readwrite' })
    ).body.key;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('create 200, list (bare array), get, PATCH and POST .../update, delete 204, then 404', async () => {
    const volume = await createVolume({ name: 'models', size: 50 });
    expect(volume).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{10}$/),
      name: 'models',
      size: 50,
      dataCenterId: 'LOCAL-1',
    });
    const list = await call('GET', '/v1/networkvolumes');
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual(volume);
    expect((await call('GET', `/v1/networkvolumes/${volume.id}`)).body).toEqual(volume);
    const renamed = await call('PATCH', `/v1/networkvolumes/${volume.id}`, { name: 'weights' });
    expect(renamed.body).toEqual({ ...volume, name: 'weights' });
    const grown = await call('POST', `/v1/networkvolumes/${volume.id}/update`, { size: 80 });
    expect(grown.status).toBe(200);
    expect(grown.body).toEqual({ ...volume, name: 'weights', size: 80 });
    const del = await call('DELETE', `/v1/networkvolumes/${volume.id}`);
    expect(del.status).toBe(204);
    expectError(await call('GET', `/v1/networkvolumes/${volume.id}`), 404);
    expectError(await call('DELETE', `/v1/networkvolumes/${volume.id}`), 404);
  });

  it('validates: required fields, size 1..4000, a data center of this installation, never shrinking', async () => {
    const post = (body: unknown) => call('POST', '/v1/networkvolumes', body);
    expectError(await post({ size: 10, dataCenterId: 'LOCAL-1' }), 400, 'name');
    expectError(await post({ name: 'x', dataCenterId: 'LOCAL-1' }), 400, 'size');
    expectError(await post({ name: 'x', size: 10 }), 400, 'dataCenterId');
    expectError(await post({ name: 'x', size: 0, dataCenterId: 'LOCAL-1' }), 400, 'size');
    expectError(await post({ name: 'x', size: 4001, dataCenterId: 'LOCAL-1' }), 400, 'size');
    expectError(await post({ name: 'x', size: '10', dataCenterId: 'LOCAL-1' }), 400, 'size');
    const other = await post({ name: 'x', size: 10, dataCenterId: 'EU-RO-1' });
    expectError(other, 400, 'dataCenterId');
    expect(other.body.error).toContain('LOCAL-1');
    const volume = await createVolume({ size: 30 });
    expectError(await call('PATCH', `/v1/networkvolumes/${volume.id}`, { size: 29 }), 400, 'size');
    expectError(await call('PATCH', `/v1/networkvolumes/${volume.id}`, { name: '' }), 400, 'name');
    expect((await call('GET', `/v1/networkvolumes/${volume.id}`)).body).toEqual(volume);
  });

  it("another user's volume is 404 on every route, absent from their list, and not mountable by their Pods", async () => {
    const volume = await createVolume();
    for (const [method, path, body] of [
      ['GET', `/v1/networkvolumes/${volume.id}`],
      ['PATCH', `/v1/networkvolumes/${volume.id}`, { name: 'mine' }],
      ['POST', `/v1/networkvolumes/${volume.id}/update`, { size: 90 }],
      ['DELETE', `/v1/networkvolumes/${volume.id}`],
    ] as const)
      expectError(await call(method, path, body, bobKey), 404);
    expect((await call('GET', '/v1/networkvolumes', undefined, bobKey)).body).toEqual([]);
    const pod = await call(
      'POST',
      '/v1/pods',
      { imageName: 'x:1', dockerStartCmd: [process.execPath, fixture], networkVolumeId: volume.id },
      bobKey,
    );
    expectError(pod, 400, 'networkVolumeId');
    expect((await call('GET', `/v1/networkvolumes/${volume.id}`)).body).toEqual(volume);
  });

  it("a Pod mounts its owner's volume by networkVolumeId; the volume cannot be deleted while the Pod exists", async () => {
    const volume = await createVolume({ name: 'scratch', size: 40 });
    const compute = server.app.get(ComputeProvider, { strict: false });
    const start = jest.spyOn(compute, 'start');
    const res = await call('POST', '/v1/pods', {
      imageName: 'x:1',
      dockerArgs: `${process.execPath} ${fixture}`,
      networkVolumeId: volume.id,
      volumeMountPath: '/data',
    });
    expect(res.status).toBe(201);
    const pod = res.body as Pod;
    expect(pod).toMatchObject({
      networkVolumeId: volume.id,
      dockerStartCmd: [process.execPath, fixture],
    });
    const spec = start.mock.calls.at(-1)![0] as WorkloadSpec;
    expect(spec.disks?.networkVolume).toEqual({
      id: volume.id,
      claimName: `nv-${volume.id}`,
      mountPath: '/data',
      sizeInGb: 40,
    });
    const withVolume = await call('GET', `/v1/pods/${pod.id}?includeNetworkVolume=true`);
    expect(withVolume.body.networkVolume).toEqual(volume);
    const listed = await call('GET', `/v1/pods?networkVolumeId=${volume.id}`);
    expect(listed.body.map((p: Pod) => p.id)).toEqual([pod.id]);

    const refused = await call('DELETE', `/v1/networkvolumes/${volume.id}`);
    expectError(refused, 409);
    expect(refused.body.error).toContain(pod.id);
    expect((await call('DELETE', `/v1/pods/${pod.id}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/networkvolumes/${volume.id}`)).status).toBe(204);
  });

  it('POST /v1/pods takes dockerArgs (one shell-quoted string) as the start command; "" means not given; not with dockerStartCmd', async () => {
    const res = await call('POST', '/v1/pods', {
      imageName: 'x:1',
      dockerArgs: `${process.execPath} ${fixture} "two words"`,
    });
    expect(res.status).toBe(201);
    expect(res.body.dockerStartCmd).toEqual([process.execPath, fixture, 'two words']);
    await call('DELETE', `/v1/pods/${res.body.id}`);
    const both = await call('POST', '/v1/pods', {
      imageName: 'x:1',
      dockerArgs: 'a b',
      dockerStartCmd: ['a'],
    });
    expectError(both, 400, 'dockerArgs');
    expectError(
      await call('POST', '/v1/pods', { imageName: 'x:1', dockerArgs: 'a "b' }),
      400,
      'dockerArgs',
    );
    // "" is no command: the local provider refuses a Pod with nothing to run.
    const empty = await call('POST', '/v1/pods', { imageName: 'x:1', dockerArgs: '' });
    expectError(empty, 400, 'dockerStartCmd');
  });
});

describe('network volumes with the Kubernetes compute provider (fake API server)', () => {
  const api = new FakeKubernetes();
  const dir = mkdtempSync(path.join(tmpdir(), 'runplane-nv-'));
  let server: TestServer;

  beforeAll(async () => {
    await api.start();
    process.env.KUBECONFIG = api.kubeconfig(dir);
    server = await startTestServer([secretsVaultService, templateGraphqlService, podRestService], {
      RUNPLANE_COMPUTE_PROVIDER: 'kubernetes',
      RUNPLANE_KUBERNETES_NAMESPACE: 'tenants',
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    delete process.env.KUBECONFIG;
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a user's volume becomes a ReadWriteMany claim when a Pod first mounts it, and goes with the volume", async () => {
    const volume = (
      await server.call('POST', '/v1/networkvolumes', {
        name: 'shared',
        size: 12,
        dataCenterId: 'LOCAL-1',
      })
    ).body as NetworkVolume;
    expect(api.claims.has(`nv-${volume.id}`)).toBe(false);
    const pods: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await server.call('POST', '/v1/pods', {
        imageName: 'acme/app:1',
        networkVolumeId: volume.id,
        volumeMountPath: '/data',
      });
      expect(res.status).toBe(201);
      pods.push(res.body.id);
      expect(api.pods.get(`${res.body.id}-1`)!.spec.volumes).toEqual([
        { name: 'network-volume', persistentVolumeClaim: { claimName: `nv-${volume.id}` } },
      ]);
    }
    const claim = api.claims.get(`nv-${volume.id}`)!;
    expect(claim.spec).toMatchObject({
      accessModes: ['ReadWriteMany'],
      resources: { requests: { storage: '12Gi' } },
    });
    expect(claim.metadata.labels['runplane.io/network-volume']).toBe(volume.id);
    for (const id of pods) expect((await server.call('DELETE', `/v1/pods/${id}`)).status).toBe(204);
    // The Pods' own volumes are theirs; the network volume stays until it is deleted itself.
    expect(api.claims.has(`nv-${volume.id}`)).toBe(true);
    expect((await server.call('DELETE', `/v1/networkvolumes/${volume.id}`)).status).toBe(204);
    expect(api.claims.has(`nv-${volume.id}`)).toBe(false);
  }, 60_000);
});
