import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ENDPOINT_DEFAULTS, PodRpc, SchedulerRpc, TemplateEvents } from '@runplane/contracts';
import { EndpointsRepository } from '../src/store/endpoints.repository.js';
import { EndpointsService } from '../src/endpoints/endpoints.service.js';
import { OTHER, OWNER, startHarness, until, type Harness } from './support.js';

describe('endpoints over the bus', () => {
  let h: Harness;
  const stopped: string[] = [];
  beforeAll(async () => {
    h = await startHarness();
    await h.server.bus.serve(PodRpc.stopWorker, async ({ workerId }) => {
      stopped.push(workerId);
      return { ok: true as const };
    });
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('creates an endpoint with RunPod REST defaults; version starts at 1', async () => {
    const ep = await h.call(SchedulerRpc.createEndpoint, {
      ownerId: OWNER,
      endpoint: { templateId: 'tpl-1' } as never,
    });
    expect(ep).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{16}$/),
      name: '',
      templateId: 'tpl-1',
      userId: OWNER,
      version: 1,
      createdAt: expect.any(String),
      computeType: 'GPU',
      gpuTypeIds: [],
      gpuCount: ENDPOINT_DEFAULTS.gpuCount,
      cpuFlavorIds: [],
      vcpuCount: 2,
      dataCenterIds: [],
      env: {},
      executionTimeoutMs: 600_000,
      idleTimeout: 5,
      scalerType: 'QUEUE_DELAY',
      scalerValue: 4,
      workersMin: 0,
      workersMax: 3,
      networkVolumeId: null,
    });
    expect(await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: ep.id })).toEqual(
      ep,
    );
  });

  it('is scoped to its owner: another user gets 404 and does not list it', async () => {
    const id = await h.endpoint({ name: 'mine' });
    expect(
      (await h.call(SchedulerRpc.listEndpoints, { ownerId: OWNER })).map((e) => e.id),
    ).toContain(id);
    expect(
      (await h.call(SchedulerRpc.listEndpoints, { ownerId: OTHER })).map((e) => e.id),
    ).not.toContain(id);
    for (const [rpc, payload] of [
      [SchedulerRpc.getEndpoint, { ownerId: OTHER, endpointId: id }],
      [SchedulerRpc.updateEndpoint, { ownerId: OTHER, endpointId: id, changes: { name: 'x' } }],
      [SchedulerRpc.deleteEndpoint, { ownerId: OTHER, endpointId: id }],
    ] as const) {
      const err = await h.error(rpc as never, payload as never);
      expect([err.status, err.code]).toEqual([404, 'ENDPOINT_NOT_FOUND']);
    }
  });

  it('rejects an unknown template with 400 naming templateId, and bad worker ranges', async () => {
    const err = await h.error(SchedulerRpc.createEndpoint, {
      ownerId: OWNER,
      endpoint: { templateId: 'tpl-missing' } as never,
    });
    expect([err.status, err.message, err.details?.[0]?.path]).toEqual([
      400,
      'templateId tpl-missing does not exist',
      'templateId',
    ]);
    const range = await h.error(SchedulerRpc.createEndpoint, {
      ownerId: OWNER,
      endpoint: { templateId: 'tpl-1', workersMin: 3, workersMax: 1 } as never,
    });
    expect([range.status, range.details?.[0]?.path]).toEqual([400, 'workersMin']);
    const invalid = await h.error(SchedulerRpc.createEndpoint, {
      ownerId: OWNER,
      endpoint: { templateId: 'tpl-1', scalerType: 'FAST' } as never,
    });
    expect(invalid.status).toBe(400);
  });

  it('answers 503 when template-graphql does not answer or fails', async () => {
    try {
      for (const mode of ['down', 'crashing'] as const) {
        h.templateService = mode;
        const err = await h.error(SchedulerRpc.createEndpoint, {
          ownerId: OWNER,
          endpoint: { templateId: 'tpl-1' } as never,
        });
        expect([mode, err.status]).toEqual([mode, 503]);
      }
    } finally {
      h.templateService = 'up';
    }
  });

  it('update changes the fields given; a new template bumps the version, scaling settings do not', async () => {
    const id = await h.endpoint({ name: 'a' });
    const update = (changes: Record<string, unknown>) =>
      h.call(SchedulerRpc.updateEndpoint, {
        ownerId: OWNER,
        endpointId: id,
        changes: changes as never,
      });
    expect(await update({ name: 'b', workersMax: 2, idleTimeout: 30 })).toMatchObject({
      name: 'b',
      workersMax: 2,
      idleTimeout: 30,
      version: 1,
      templateId: 'tpl-1',
    });
    expect(await update({ templateId: 'tpl-1' })).toMatchObject({ version: 1 }); // unchanged value
    expect(await update({ templateId: 'tpl-2' })).toMatchObject({
      version: 2,
      templateId: 'tpl-2',
    });
    expect(await update({ gpuTypeIds: ['NVIDIA L40S'] })).toMatchObject({ version: 3 });
    const bad = await h.error(SchedulerRpc.updateEndpoint, {
      ownerId: OWNER,
      endpointId: id,
      changes: { templateId: 'tpl-missing' } as never,
    });
    expect(bad.status).toBe(400);
    const range = await h.error(SchedulerRpc.updateEndpoint, {
      ownerId: OWNER,
      endpointId: id,
      changes: { workersMin: 5 } as never,
    });
    expect(range.status).toBe(400);
    expect(
      await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id }),
    ).toMatchObject({ version: 3, workersMin: 0, workersMax: 2 });
  });

  it('env: kept at create, a change is a rolling release (the same env again is not), a bad map is 400 naming it', async () => {
    const id = await h.endpoint({ env: { MODEL: 'small' } } as never);
    const get = () => h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id });
    expect(await get()).toMatchObject({ env: { MODEL: 'small' }, version: 1 });
    const update = (env: unknown) =>
      h.call(SchedulerRpc.updateEndpoint, {
        ownerId: OWNER,
        endpointId: id,
        changes: { env } as never,
      });
    expect(await update({ MODEL: 'small' })).toMatchObject({ version: 1 });
    expect(await update({ MODEL: 'large', HF_TOKEN: '{{ RUNPOD_SECRET_hf }}' })).toMatchObject({
      env: { MODEL: 'large', HF_TOKEN: '{{ RUNPOD_SECRET_hf }}' },
      version: 2,
    });
    const bad = await h.error(SchedulerRpc.updateEndpoint, {
      ownerId: OWNER,
      endpointId: id,
      changes: { env: { MODEL: 5 } } as never,
    });
    expect(bad.status).toBe(400);
    expect(bad.message).toContain('env.MODEL must be a string');
  });

  it("a TemplateEvents.updated event bumps the version of the template owner's endpoints on it only", async () => {
    h.templates.add('tpl-event');
    h.templateOwners.set('tpl-event', OWNER); // OWNER's public template, used by OTHER too
    const a = await h.endpoint({ templateId: 'tpl-event' });
    const b = await h.endpoint({ templateId: 'tpl-event' }, OTHER);
    const c = await h.endpoint({ templateId: 'tpl-1' });
    h.templateRevisions.set('tpl-event', 2);
    await h.server.bus.publish(TemplateEvents.updated, {
      templateId: 'tpl-event',
      ownerId: OWNER,
      revision: 2,
    });
    await until(
      async () =>
        (await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: a })).version === 2,
      10_000,
      'version bump',
    );
    const endpoints = h.server.app.get(EndpointsRepository, { strict: false });
    expect(await endpoints.find(a)).toMatchObject({ version: 2, templateRevision: null });
    // OTHER's endpoint keeps running revision 1 until OTHER sets its template again.
    expect(await endpoints.find(b)).toMatchObject({ version: 1, templateRevision: 1 });
    expect(await endpoints.find(c)).toMatchObject({ version: 1 });
    // Any other change leaves it pinned; setting templateId, even the same one, moves it on.
    await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: OTHER,
      endpointId: b,
      changes: { workersMax: 1 },
    });
    expect(await endpoints.find(b)).toMatchObject({ version: 1, templateRevision: 1 });
    const moved = await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: OTHER,
      endpointId: b,
      changes: { templateId: 'tpl-event' },
    });
    expect(moved.version).toBe(2);
    expect(await endpoints.find(b)).toMatchObject({ version: 2, templateRevision: 2 });
    // The same again changes nothing: it already runs the current revision.
    await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: OTHER,
      endpointId: b,
      changes: { templateId: 'tpl-event' },
    });
    expect(await endpoints.find(b)).toMatchObject({ version: 2, templateRevision: 2 });
    // The template owner's own endpoint follows: setting templateId pins nothing.
    await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: OWNER,
      endpointId: a,
      changes: { templateId: 'tpl-event' },
    });
    expect(await endpoints.find(a)).toMatchObject({ version: 2, templateRevision: null });
  });

  it("pins another user's endpoint that still follows the template (made before pinning) to the revision before the change", async () => {
    h.templates.add('tpl-legacy');
    const legacy = await h.endpoint({ templateId: 'tpl-legacy' }, OTHER);
    const endpoints = h.server.app.get(EndpointsRepository, { strict: false });
    expect(await endpoints.find(legacy)).toMatchObject({ templateRevision: null });
    await h.call(SchedulerRpc.releaseTemplate, {
      templateId: 'tpl-legacy',
      eventId: 'evt-legacy-1',
      ownerId: OWNER,
      revision: 4,
    });
    expect(await endpoints.find(legacy)).toMatchObject({ version: 1, templateRevision: 3 });
  });

  it('tells template-graphql how many endpoints (of any user) use a template', async () => {
    h.templates.add('tpl-usage');
    expect(await h.call(SchedulerRpc.templateUsage, { templateId: 'tpl-usage' })).toEqual({
      endpoints: 0,
    });
    const mine = await h.endpoint({ templateId: 'tpl-usage' });
    await h.endpoint({ templateId: 'tpl-usage' }, OTHER);
    expect(await h.call(SchedulerRpc.templateUsage, { templateId: 'tpl-usage' })).toEqual({
      endpoints: 2,
    });
    await h.call(SchedulerRpc.deleteEndpoint, { ownerId: OWNER, endpointId: mine });
    expect(await h.call(SchedulerRpc.templateUsage, { templateId: 'tpl-usage' })).toEqual({
      endpoints: 1,
    });
  });

  it('applies each template event once, however often it is delivered', async () => {
    h.templates.add('tpl-dedupe');
    const id = await h.endpoint({ templateId: 'tpl-dedupe' });
    const endpoints = h.server.app.get(EndpointsService, { strict: false });
    const release = { templateId: 'tpl-dedupe', ownerId: OWNER };
    await endpoints.templateUpdated(release, 'evt-dedupe-1');
    await endpoints.templateUpdated(release, 'evt-dedupe-1'); // a redelivery
    expect(
      (await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id })).version,
    ).toBe(2);
    await endpoints.templateUpdated(release, 'evt-dedupe-2');
    expect(
      (await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id })).version,
    ).toBe(3);
  });

  it('releaseTemplate applies the rolling release at once; the event carrying the same id later changes nothing', async () => {
    h.templates.add('tpl-release');
    const id = await h.endpoint({ templateId: 'tpl-release' });
    expect(
      await h.call(SchedulerRpc.releaseTemplate, {
        templateId: 'tpl-release',
        eventId: 'evt-release-1',
        ownerId: OWNER,
      }),
    ).toEqual({ ok: true });
    expect(
      (await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id })).version,
    ).toBe(2);
    await h.server.app
      .get(EndpointsService, { strict: false })
      .templateUpdated({ templateId: 'tpl-release', ownerId: OWNER }, 'evt-release-1'); // the event arrives
    expect(
      (await h.call(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: id })).version,
    ).toBe(2);
    await expect(
      h.call(SchedulerRpc.releaseTemplate, { templateId: 'tpl-release' } as never),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('delete removes queued jobs, cancels running ones (their workers are told), and stops its workers', async () => {
    const ep = await h.endpoint();
    const running = await h.submit(ep);
    const queued = await h.submit(ep);
    const [taken] = (
      await h.call(SchedulerRpc.takeJobs, {
        endpointId: ep,
        workerId: 'w-del',
        batchSize: 1,
        waitMs: 0,
      })
    ).jobs;
    expect(taken.id).toBe(running);
    expect(await h.call(SchedulerRpc.deleteEndpoint, { ownerId: OWNER, endpointId: ep })).toEqual({
      ok: true,
    });
    expect(
      (await h.error(SchedulerRpc.getEndpoint, { ownerId: OWNER, endpointId: ep })).status,
    ).toBe(404);
    expect(
      (
        await h.error(SchedulerRpc.submitJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: 'after-delete',
          mode: 'run',
          job: { input: {} } as never,
        })
      ).status,
    ).toBe(404);
    expect(
      (await h.error(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: ep, jobId: queued }))
        .status,
    ).toBe(404);
    expect(
      (await h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: ep, jobId: running }))
        .status,
    ).toBe('CANCELLED');
    expect(
      (await h.error(SchedulerRpc.deleteEndpoint, { ownerId: OWNER, endpointId: ep })).status,
    ).toBe(404);
    // the worker (external here) is forgotten by the autoscaler
    expect(
      (
        await h.error(SchedulerRpc.takeJobs, {
          endpointId: ep,
          workerId: 'w-del',
          batchSize: 1,
          waitMs: 0,
        })
      ).status,
    ).toBe(404);
    expect(stopped).not.toContain('w-del'); // not a managed worker: nothing to stop in pod-rest
  });
});
