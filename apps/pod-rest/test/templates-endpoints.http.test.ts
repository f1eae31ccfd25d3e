import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ENDPOINT_DEFAULTS,
  RunplaneError,
  SchedulerRpc,
  TemplateRpc,
  VaultRpc,
  type CreateEndpointRequest,
  type Endpoint,
  type Template,
  type UpdateEndpointRequest,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { templateGraphqlService } from '@runplane/template-graphql';
import { podRestService } from '../src/index.js';

const ADMIN_USER = 'usr_admin'; // the bootstrap admin key's user
let seq = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;

/** Stand-in for the scheduler's endpoint handlers: records what pod-rest sends, scoped per owner like the real one. */
class FakeScheduler {
  readonly endpoints = new Map<string, Endpoint>();
  readonly received: unknown[] = [];
  private n = 0;

  private owned(ownerId: string, endpointId: string): Endpoint {
    const e = this.endpoints.get(endpointId);
    if (!e || e.userId !== ownerId)
      throw RunplaneError.notFound(`endpoint ${endpointId} not found`);
    return e;
  }

  async serve(server: TestServer) {
    await server.bus.serve(SchedulerRpc.createEndpoint, async (req: CreateEndpointRequest) => {
      this.received.push(req);
      const e: Endpoint = {
        ...ENDPOINT_DEFAULTS,
        gpuTypeIds: [],
        cpuFlavorIds: [],
        vcpuCount: 2,
        dataCenterIds: [],
        env: {},
        name: '',
        ...req.endpoint,
        id: `ep${++this.n}`,
        userId: req.ownerId,
        version: 1,
        createdAt: new Date().toISOString(),
      };
      this.endpoints.set(e.id, e);
      return e;
    });
    await server.bus.serve(SchedulerRpc.listEndpoints, async ({ ownerId }) =>
      [...this.endpoints.values()].filter((e) => e.userId === ownerId),
    );
    await server.bus.serve(SchedulerRpc.getEndpoint, async ({ ownerId, endpointId }) =>
      this.owned(ownerId, endpointId),
    );
    await server.bus.serve(SchedulerRpc.updateEndpoint, async (req: UpdateEndpointRequest) => {
      this.received.push(req);
      const e = { ...this.owned(req.ownerId, req.endpointId), ...req.changes };
      this.endpoints.set(e.id, e);
      return e;
    });
    // template-graphql asks these when a template is deleted or updated.
    await server.bus.serve(SchedulerRpc.templateUsage, async ({ templateId }) => ({
      endpoints: [...this.endpoints.values()].filter((e) => e.templateId === templateId).length,
    }));
    await server.bus.serve(SchedulerRpc.releaseTemplate, async () => ({ ok: true as const }));
    await server.bus.serve(SchedulerRpc.deleteEndpoint, async ({ ownerId, endpointId }) => {
      this.owned(ownerId, endpointId);
      this.endpoints.delete(endpointId);
      return { ok: true as const };
    });
  }
}

describe('pod-rest REST v1 /v1/templates and /v1/endpoints', () => {
  let server: TestServer;
  const scheduler = new FakeScheduler();

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, templateGraphqlService, podRestService]);
    await scheduler.serve(server);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const createTemplate = async (extra: Record<string, unknown> = {}) => {
    const res = await server.call('POST', '/v1/templates', {
      name: uniq('tpl'),
      imageName: 'img:1',
      isServerless: true,
      volumeInGb: 0,
      ...extra,
    });
    expect(res.status).toBe(200);
    return res.body as Template;
  };
  const expectError = (
    res: { status: number; body: any; headers: Headers },
    status: number,
    path?: string,
  ) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ status, error: expect.any(String), message: res.body.error });
    if (path)
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  };

  describe('templates', () => {
    it('POST creates (200) with defaults; a duplicate name is 409; a missing name 400', async () => {
      const name = uniq('create');
      const res = await server.call('POST', '/v1/templates', {
        name,
        imageName: 'img:1',
        dockerStartCmd: ['node', 'w.mjs'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(String),
        name,
        imageName: 'img:1',
        category: 'NVIDIA',
        containerDiskInGb: 50,
        containerRegistryAuthId: null,
        dockerEntrypoint: [],
        dockerStartCmd: ['node', 'w.mjs'],
        earned: 0,
        env: {},
        isPublic: false,
        isRunpod: false,
        isServerless: false,
        ports: [],
        portsConfig: [],
        readme: '',
        runtimeInMin: 0,
        volumeInGb: 20,
        volumeMountPath: '/workspace',
      });
      const dup = await server.call('POST', '/v1/templates', { name, imageName: 'other:1' });
      expectError(dup, 409);
      expect(dup.body.error).toContain(name);
      const missing = await server.call('POST', '/v1/templates', { imageName: 'x:1' });
      expectError(missing, 400, 'name');
      expect(missing.body.error).toBe('name is required');
      expectError(await server.call('POST', '/v1/templates'), 400, 'name');
      expectError(
        await server.call('POST', '/v1/templates', [{ name: uniq('arr'), imageName: 'x:1' }]),
        400,
      );
    });

    it('a field RunPod does not have is 400 naming it, nested ones too, and nothing is created', async () => {
      const name = uniq('typo');
      const res = await server.call('POST', '/v1/templates', {
        name,
        imageName: 'img:1',
        dockerStartCommand: ['node', 'w.mjs'],
      });
      expectError(res, 400, 'dockerStartCommand');
      expect(res.body.error).toBe('unknown field "dockerStartCommand"');
      const nested = await server.call('POST', '/v1/templates', {
        name,
        imageName: 'img:1',
        ports: ['8888/http'],
        portsConfig: [{ port: '8888', name: 'Jupyter', label: 'x' }],
      });
      expect(nested.body.error).toBe('unknown field "portsConfig.0.label"');
      const list = (await server.call('GET', '/v1/templates')).body as Template[];
      expect(list.map((t) => t.name)).not.toContain(name);
      const t = await createTemplate();
      const update = await server.call('PATCH', `/v1/templates/${t.id}`, { imageNmae: 'img:2' });
      expect(update.body.error).toBe('unknown field "imageNmae"');
      // Every field of RunPod's TemplateCreateInput is accepted.
      const all = await server.call('POST', '/v1/templates', {
        name: uniq('all'),
        imageName: 'img:1',
        category: 'CPU',
        containerDiskInGb: 5,
        volumeInGb: 0,
        volumeMountPath: '/data',
        dockerEntrypoint: [],
        dockerStartCmd: ['run'],
        env: { constructor: 'kept' },
        ports: ['8888/http'],
        isPublic: false,
        isServerless: true,
        readme: '',
      });
      expect(all.status).toBe(200);
      expect(all.body.env).toEqual({ constructor: 'kept' });
    });

    it("GET lists a bare array, gets one; another user's template is 404 unless public", async () => {
      const t = await createTemplate();
      const list = await server.call('GET', '/v1/templates');
      expect(list.status).toBe(200);
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body.map((x: Template) => x.id)).toContain(t.id);
      const got = await server.call('GET', `/v1/templates/${t.id}`);
      expect(got).toMatchObject({ status: 200, body: t });

      const bobs = await server.bus.request(TemplateRpc.create, {
        ownerId: 'usr_bob',
        template: { name: uniq('bob'), imageName: 'img:1' },
      });
      expectError(await server.call('GET', `/v1/templates/${bobs.id}`), 404);
      await server.bus.request(TemplateRpc.update, {
        ownerId: 'usr_bob',
        templateId: bobs.id,
        changes: { isPublic: true },
      });
      expect((await server.call('GET', `/v1/templates/${bobs.id}`)).status).toBe(200);
      expect(
        (await server.call('GET', '/v1/templates')).body.map((x: Template) => x.id),
      ).not.toContain(bobs.id);
      expect(
        (await server.call('GET', '/v1/templates?includePublicTemplates=true')).body.map(
          (x: Template) => x.id,
        ),
      ).toContain(bobs.id);
      expectError(
        await server.call('GET', '/v1/templates?includePublicTemplates=maybe'),
        400,
        'includePublicTemplates',
      );
      // Public is readable, not writable, by others.
      expectError(
        await server.call('PATCH', `/v1/templates/${bobs.id}`, { readme: 'mine now' }),
        404,
      );
      expectError(await server.call('DELETE', `/v1/templates/${bobs.id}`), 404);
      expectError(await server.call('GET', '/v1/templates/does-not-exist'), 404);
    });

    it('POST .../update and PATCH change only the given fields; unknown id 404', async () => {
      const t = await createTemplate({ readme: 'original', dockerStartCmd: ['a'] });
      const upd = await server.call('POST', `/v1/templates/${t.id}/update`, {
        readme: '# updated',
        env: { FOO: 'bar', EMPTY: '' },
        containerDiskInGb: 7,
        ports: ['8080/http', '22/tcp'],
      });
      expect(upd.status).toBe(200);
      expect(upd.body).toEqual({
        ...t,
        readme: '# updated',
        env: { FOO: 'bar', EMPTY: '' },
        containerDiskInGb: 7,
        ports: ['8080/http', '22/tcp'],
      });
      expect((await server.call('GET', `/v1/templates/${t.id}`)).body).toEqual(upd.body);
      const patched = await server.call('PATCH', `/v1/templates/${t.id}`, { readme: 'patched' });
      expect(patched.body).toEqual({ ...upd.body, readme: 'patched' });
      // RunPod's TemplateUpdateInput has no category: it is fixed at creation.
      const category = await server.call('PATCH', `/v1/templates/${t.id}`, { category: 'AMD' });
      expectError(category, 400, 'category');
      expect(category.body.error).toBe('unknown field "category"');
      const empty = await server.call('PATCH', `/v1/templates/${t.id}`);
      expect(empty).toMatchObject({ status: 200, body: patched.body });
      expectError(await server.call('POST', '/v1/templates/nope/update', { readme: 'x' }), 404);
    });

    it('wrongly typed update fields are 400 with details naming them, and nothing changes', async () => {
      const t = await createTemplate({ env: { A: '1' } });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ containerDiskInGb: 'fifty' }, 'containerDiskInGb'],
        [{ containerDiskInGb: 2.5 }, 'containerDiskInGb'],
        [{ dockerStartCmd: 'node worker.mjs' }, 'dockerStartCmd'],
        [{ dockerEntrypoint: [1, 2] }, 'dockerEntrypoint'],
        [{ env: ['A=1'] }, 'env'],
        [{ env: { A: 1 } }, 'env'],
        [{ ports: '8080/http' }, 'ports'],
        [{ ports: ['8080/udp'] }, 'ports'],
        [{ isPublic: 'yes' }, 'isPublic'],
        [{ name: 17 }, 'name'],
        [{ readme: 'fine', volumeMountPath: 'relative' }, 'volumeMountPath'],
      ];
      for (const [body, path] of cases)
        expectError(await server.call('POST', `/v1/templates/${t.id}/update`, body), 400, path);
      expect((await server.call('GET', `/v1/templates/${t.id}`)).body).toEqual(t);
    });

    it('a taken name is 409 on update too', async () => {
      const a = await createTemplate();
      const b = await createTemplate();
      const res = await server.call('PATCH', `/v1/templates/${b.id}`, { name: a.name });
      expectError(res, 409);
      expect(res.body.error).toContain(a.name);
    });

    it('DELETE is 204 without a body, then 404', async () => {
      const t = await createTemplate();
      const del = await fetch(`${server.url}/v1/templates/${t.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${server.apiKey}` },
      });
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      expectError(await server.call('GET', `/v1/templates/${t.id}`), 404);
      expectError(await server.call('DELETE', `/v1/templates/${t.id}`), 404);
    });

    it('DELETE of a template an endpoint uses is 409 saying so, and the template stays', async () => {
      const t = await createTemplate();
      await server.call('POST', '/v1/endpoints', { templateId: t.id });
      const res = await server.call('DELETE', `/v1/templates/${t.id}`);
      expectError(res, 409);
      expect(res.body).toMatchObject({
        code: 'TEMPLATE_IN_USE',
        error: expect.stringContaining('in use by 1 serverless endpoint'),
      });
      expect((await server.call('GET', `/v1/templates/${t.id}`)).status).toBe(200);
    });

    it('needs a user key: none, a wrong one and a worker key are 401', async () => {
      expectError(await server.call('GET', '/v1/templates', undefined, { authorization: '' }), 401);
      expectError(
        await server.call('GET', '/v1/templates', undefined, { authorization: 'Bearer wrong' }),
        401,
      );
      const { key } = await server.bus.request(VaultRpc.mintWorkerKey, {
        userId: ADMIN_USER,
        endpointId: 'ep1',
        workerId: 'w1',
      });
      expectError(
        await server.call('GET', '/v1/templates', undefined, { authorization: `Bearer ${key}` }),
        401,
      );
      expectError(
        await server.call('GET', '/v1/endpoints/ep1', undefined, { authorization: key }),
        401,
      );
    });
  });

  describe('endpoints (scheduler stand-in)', () => {
    it('POST forwards the known fields with the caller as owner and returns the endpoint (200)', async () => {
      const t = await createTemplate();
      scheduler.received.length = 0;
      const res = await server.call('POST', '/v1/endpoints', {
        name: uniq('ep'),
        templateId: t.id,
        workersMin: 0,
        workersMax: 1,
        executionTimeoutMs: 5000,
        flashboot: true,
        networkVolumeId: null,
        allowedCudaVersions: ['12.4'],
        minCudaVersion: '12.0',
        networkVolumeIds: [],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.any(String),
        templateId: t.id,
        workersMax: 1,
        idleTimeout: ENDPOINT_DEFAULTS.idleTimeout,
        userId: ADMIN_USER,
      });
      expect(scheduler.received).toEqual([
        {
          ownerId: ADMIN_USER,
          endpoint: {
            name: res.body.name,
            templateId: t.id,
            workersMin: 0,
            workersMax: 1,
            executionTimeoutMs: 5000,
          },
        },
      ]);
    });

    it('rejects invalid bodies with 400 details before reaching the scheduler', async () => {
      scheduler.received.length = 0;
      const missing = await server.call('POST', '/v1/endpoints', { workersMax: 1 });
      expectError(missing, 400, 'templateId');
      expect(missing.body.error).toBe('templateId is required');
      const typo = await server.call('POST', '/v1/endpoints', { templateId: 't', workerMax: 1 });
      expectError(typo, 400, 'workerMax');
      expect(typo.body.error).toBe('unknown field "workerMax"');
      expectError(
        await server.call('POST', '/v1/endpoints', { templateId: 't', workersMax: 'many' }),
        400,
        'workersMax',
      );
      expectError(
        await server.call('POST', '/v1/endpoints', { templateId: 't', scalerType: 'FAST' }),
        400,
        'scalerType',
      );
      expectError(
        await server.call('POST', '/v1/endpoints', { templateId: 't', executionTimeoutMs: 10 }),
        400,
        'executionTimeoutMs',
      );
      expect(scheduler.received).toEqual([]);
    });

    it('lists (bare array), gets (with includeTemplate), updates by PATCH and POST, deletes (204), then 404', async () => {
      const t = await createTemplate();
      const e = (await server.call('POST', '/v1/endpoints', { templateId: t.id })).body as Endpoint;
      const list = await server.call('GET', '/v1/endpoints');
      expect(list.status).toBe(200);
      expect(list.body.map((x: Endpoint) => x.id)).toContain(e.id);
      const got = await server.call('GET', `/v1/endpoints/${e.id}`);
      expect(got).toMatchObject({ status: 200, body: e });
      expect(got.body).not.toHaveProperty('template');
      expect((await server.call('GET', `/v1/endpoints/${e.id}?includeTemplate=true`)).body).toEqual(
        { ...e, template: t },
      );
      const listed = (await server.call('GET', '/v1/endpoints?includeTemplate=true')).body.find(
        (x: Endpoint) => x.id === e.id,
      );
      expect(listed.template).toEqual(t);

      scheduler.received.length = 0;
      // RunPod's EndpointUpdateInput has no computeType: it is fixed at creation.
      const computeType = await server.call('PATCH', `/v1/endpoints/${e.id}`, {
        workersMax: 0,
        computeType: 'CPU',
      });
      expect(computeType.body.error).toBe('unknown field "computeType"');
      const patched = await server.call('PATCH', `/v1/endpoints/${e.id}`, { workersMax: 0 });
      expect(patched).toMatchObject({ status: 200, body: { id: e.id, workersMax: 0 } });
      const renamed = await server.call('POST', `/v1/endpoints/${e.id}/update`, {
        name: 'renamed',
      });
      expect(renamed).toMatchObject({ status: 200, body: { name: 'renamed', workersMax: 0 } });
      expect(scheduler.received).toEqual([
        { ownerId: ADMIN_USER, endpointId: e.id, changes: { workersMax: 0 } },
        { ownerId: ADMIN_USER, endpointId: e.id, changes: { name: 'renamed' } },
      ]);
      expectError(
        await server.call('PATCH', `/v1/endpoints/${e.id}`, { workersMax: 'many' }),
        400,
        'workersMax',
      );

      const del = await server.call('DELETE', `/v1/endpoints/${e.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeUndefined();
      expectError(await server.call('GET', `/v1/endpoints/${e.id}`), 404);
      expectError(await server.call('DELETE', `/v1/endpoints/${e.id}`), 404);
    });

    it('an endpoint whose template is gone is returned without one', async () => {
      // (The template was deleted before the endpoint referred to it: a delete racing an endpoint create.)
      const t = await createTemplate();
      expect((await server.call('DELETE', `/v1/templates/${t.id}`)).status).toBe(204);
      const e = (await server.call('POST', '/v1/endpoints', { templateId: t.id })).body as Endpoint;
      const got = await server.call('GET', `/v1/endpoints/${e.id}?includeTemplate=true`);
      expect(got).toMatchObject({ status: 200, body: e });
      expect(got.body).not.toHaveProperty('template');
    });
  });
});
