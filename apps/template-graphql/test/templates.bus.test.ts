import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  PodRpc,
  RunplaneError,
  SchedulerRpc,
  TemplateEvents,
  TemplateRpc,
  type Template,
  type TemplatePodUsage,
  type TemplateUpdatedEvent,
} from '@runplane/contracts';
import type { DeliveredEvent, Subscription } from '@runplane/bus';
import { startTestServer, type TestServer } from '@runplane/platform';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { templateGraphqlService } from '../src/index.js';
import { OutboxRelay } from '@runplane/database';

const ALICE = 'usr_alice';
const BOB = 'usr_bob';
let seq = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;

describe('template-graphql: TemplateRpc over the bus', () => {
  let server: TestServer;
  let db: PrismaClient;
  let relay: OutboxRelay;
  let events: Array<DeliveredEvent<TemplateUpdatedEvent>>;
  let consumer: Subscription;
  const endpointUsage = new Map<string, number>();
  const podUsage = new Map<string, TemplatePodUsage>();
  let schedulerDown = false;
  const releases: Array<{ templateId: string; eventId: string }> = [];

  beforeAll(async () => {
    server = await startTestServer([templateGraphqlService]);
    db = server.app.get(PrismaClient, { strict: false });
    relay = server.app.get(OutboxRelay, { strict: false });
    events = [];
    // The scheduler's group, declared by the event: what it would receive.
    consumer = await server.bus.consume(TemplateEvents.updated, 'scheduler', async (e) => {
      events.push(e);
    });
    // Stand-ins for the scheduler (endpoints on a template) and pod-rest (Pods on it).
    await server.bus.serve(SchedulerRpc.templateUsage, async ({ templateId }) => {
      if (schedulerDown) throw RunplaneError.unavailable('no instance of scheduler is answering');
      return { endpoints: endpointUsage.get(templateId) ?? 0 };
    });
    await server.bus.serve(
      PodRpc.templateUsage,
      async ({ templateId }) => podUsage.get(templateId) ?? { pods: 0, lastUsedAt: null },
    );
    await server.bus.serve(SchedulerRpc.releaseTemplate, async (req) => {
      releases.push(req);
      return { ok: true as const };
    });
  }, 60_000);
  afterAll(async () => {
    await consumer?.stop();
    await server?.stop();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const create = (ownerId: string, template: Record<string, unknown>) =>
    server.bus.request(TemplateRpc.create, {
      ownerId,
      template: { imageName: 'img:1', ...template } as never,
    });
  const waitForEvents = async (n: number) => {
    for (let i = 0; i < 200 && events.length < n; i++) await new Promise((r) => setTimeout(r, 25));
    return events;
  };

  it('creates a template with the TemplateCreateInput defaults and the REST shape', async () => {
    const name = uniq('defaults');
    const t = await create(ALICE, { name });
    expect(t).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{16}$/),
      name,
      imageName: 'img:1',
      category: 'NVIDIA',
      containerDiskInGb: 50,
      containerRegistryAuthId: null,
      dockerEntrypoint: [],
      dockerStartCmd: [],
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
    const full = await create(ALICE, {
      name: uniq('full'),
      category: 'CPU',
      containerDiskInGb: 5,
      volumeInGb: 0,
      volumeMountPath: '/data',
      containerRegistryAuthId: 'reg1',
      dockerEntrypoint: ['node'],
      dockerStartCmd: ['worker.mjs'],
      env: { A: '1', S: '{{ RUNPOD_SECRET_x }}' },
      ports: ['8888/http', '22/tcp'],
      isPublic: true,
      isServerless: true,
      readme: '# hi',
      unknownField: 'ignored',
    });
    expect(full).toMatchObject({
      category: 'CPU',
      containerDiskInGb: 5,
      volumeInGb: 0,
      volumeMountPath: '/data',
      containerRegistryAuthId: 'reg1',
      dockerEntrypoint: ['node'],
      dockerStartCmd: ['worker.mjs'],
      env: { A: '1', S: '{{ RUNPOD_SECRET_x }}' },
      ports: ['8888/http', '22/tcp'],
      isPublic: true,
      isServerless: true,
      readme: '# hi',
    });
    expect(full).not.toHaveProperty('unknownField');
    expect(
      await server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: full.id }),
    ).toEqual(full);
  });

  it('names are unique per owner: a duplicate is 409 naming it and leaves no row behind', async () => {
    const name = uniq('dup');
    await create(ALICE, { name });
    const before = await db.template.count();
    await expect(create(ALICE, { name, imageName: 'other:2' })).rejects.toMatchObject({
      status: 409,
      code: 'TEMPLATE_NAME_TAKEN',
      message: expect.stringContaining(name),
    });
    expect(await db.template.count()).toBe(before);
    await expect(create(BOB, { name })).resolves.toMatchObject({ name });
  });

  it('rejects invalid input with 400 details', async () => {
    await expect(
      server.bus.request(TemplateRpc.create, {
        ownerId: ALICE,
        template: { imageName: 'x:1' } as never,
      }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'template.name' })],
    });
    await expect(create(ALICE, { name: uniq('bad'), env: { A: 1 } })).rejects.toMatchObject({
      status: 400,
      details: [
        expect.objectContaining({
          path: 'template.env',
          message: expect.stringContaining('env.A'),
        }),
      ],
    });
    await expect(create(ALICE, { name: uniq('bad'), category: 'INTEL' })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("lists the owner's templates, and public ones of others only when asked", async () => {
    const mine = await create(ALICE, { name: uniq('list-mine') });
    const bobsPublic = await create(BOB, { name: uniq('list-public'), isPublic: true });
    const bobsPrivate = await create(BOB, { name: uniq('list-private') });
    const own = await server.bus.request(TemplateRpc.list, { ownerId: ALICE });
    const ids = (ts: Template[]) => ts.map((t) => t.id);
    expect(ids(own)).toContain(mine.id);
    expect(ids(own)).not.toContain(bobsPublic.id);
    const withPublic = await server.bus.request(TemplateRpc.list, {
      ownerId: ALICE,
      includePublicTemplates: true,
    });
    expect(ids(withPublic)).toEqual(expect.arrayContaining([mine.id, bobsPublic.id]));
    expect(ids(withPublic)).not.toContain(bobsPrivate.id);
  });

  it("gets the owner's or a public template; anything else is 404", async () => {
    const bobsPublic = await create(BOB, { name: uniq('get-public'), isPublic: true });
    const bobsPrivate = await create(BOB, { name: uniq('get-private') });
    await expect(
      server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: bobsPublic.id }),
    ).resolves.toEqual(bobsPublic);
    await expect(
      server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: bobsPrivate.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: 'nope' }),
    ).rejects.toMatchObject({ status: 404, code: 'TEMPLATE_NOT_FOUND' });
  });

  it('updates only the given fields and announces the change with template.updated', async () => {
    const t = await create(ALICE, {
      name: uniq('upd'),
      env: { A: '1' },
      dockerStartCmd: ['run'],
      containerRegistryAuthId: 'reg',
    });
    events.length = 0;
    const updated = await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: t.id,
      changes: { env: { B: '2' }, containerDiskInGb: 7, readme: null, extra: 1 } as never,
    });
    expect(updated).toEqual({ ...t, env: { B: '2' }, containerDiskInGb: 7 });
    expect(await server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: t.id })).toEqual(
      updated,
    );
    // Published before the reply: already on the bus (delivery to the consumer is asynchronous).
    expect(await db.outboxEvent.count()).toBe(0);
    await waitForEvents(1);
    expect(events.map((e) => e.payload)).toEqual([
      { templateId: t.id, ownerId: ALICE, revision: 2 },
    ]);
    // The scheduler was also asked to apply the release before the answer, under the event's id.
    expect(releases).toContainEqual({
      templateId: t.id,
      eventId: events[0].id,
      ownerId: ALICE,
      revision: 2,
    });

    // Nothing actually changes: no event (no needless rolling release).
    const same = await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: t.id,
      changes: { env: { B: '2' }, name: t.name },
    });
    expect(same).toEqual(updated);
    // null removes the registry credentials, the only nullable field.
    const cleared = await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: t.id,
      changes: { containerRegistryAuthId: null } as never,
    });
    expect(cleared.containerRegistryAuthId).toBeNull();
    await waitForEvents(2);
    expect(events).toHaveLength(2);
  });

  it('update: unknown or foreign template 404, wrong types 400 with nothing changed, taken name 409', async () => {
    const t = await create(ALICE, { name: uniq('upd-err') });
    const other = await create(ALICE, { name: uniq('upd-other') });
    const bobsPublic = await create(BOB, { name: uniq('upd-bob'), isPublic: true });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: 'nope',
        changes: { readme: 'x' },
      }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: bobsPublic.id,
        changes: { readme: 'x' },
      }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: t.id,
        changes: { readme: 'ok', containerDiskInGb: 2.5 } as never,
      }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'changes.containerDiskInGb' })],
    });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: t.id,
        changes: { ports: ['80/udp'] },
      }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'changes.ports' })],
    });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: t.id,
        changes: { name: other.name, readme: 'x' },
      }),
    ).rejects.toMatchObject({ status: 409, message: expect.stringContaining(other.name) });
    expect(await server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: t.id })).toEqual(
      t,
    );
  });

  it("deletes the owner's template only; then it is 404", async () => {
    const t = await create(ALICE, { name: uniq('del') });
    const bobs = await create(BOB, { name: uniq('del-bob'), isPublic: true });
    await expect(
      server.bus.request(TemplateRpc.delete, { ownerId: ALICE, templateId: bobs.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(TemplateRpc.delete, { ownerId: ALICE, templateId: t.id }),
    ).resolves.toEqual({ ok: true });
    await expect(
      server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: t.id }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      server.bus.request(TemplateRpc.delete, { ownerId: ALICE, templateId: t.id }),
    ).rejects.toMatchObject({ status: 404 });
    // The name is free again.
    await expect(create(ALICE, { name: t.name })).resolves.toMatchObject({ name: t.name });
  });

  it('refuses to delete a template in use by an endpoint or a Pod, or used by a Pod in the last 2 minutes (409 saying why)', async () => {
    const t = await create(ALICE, { name: uniq('in-use') });
    const del = () => server.bus.request(TemplateRpc.delete, { ownerId: ALICE, templateId: t.id });
    endpointUsage.set(t.id, 2);
    podUsage.set(t.id, { pods: 1, lastUsedAt: null });
    await expect(del()).rejects.toMatchObject({
      status: 409,
      code: 'TEMPLATE_IN_USE',
      message: expect.stringContaining('in use by 2 serverless endpoints and 1 Pod'),
    });
    endpointUsage.delete(t.id);
    podUsage.set(t.id, { pods: 0, lastUsedAt: new Date(Date.now() - 30_000).toISOString() });
    await expect(del()).rejects.toMatchObject({
      status: 409,
      code: 'TEMPLATE_RECENTLY_USED',
      message: expect.stringMatching(/can be deleted 120 s after its most recent use, from \d{4}-/),
    });
    schedulerDown = true;
    await expect(del()).rejects.toMatchObject({ status: 503 });
    schedulerDown = false;
    await expect(
      server.bus.request(TemplateRpc.get, { ownerId: ALICE, templateId: t.id }),
    ).resolves.toMatchObject({ id: t.id });
    podUsage.set(t.id, { pods: 0, lastUsedAt: new Date(Date.now() - 121_000).toISOString() });
    await expect(del()).resolves.toEqual({ ok: true });
  });

  it('port labels name exposed ports once; a change of ports keeps the labels of the ports left', async () => {
    const t = await create(ALICE, {
      name: uniq('labels'),
      ports: ['8888/http', '22/tcp'],
      portsConfig: [{ port: '8888', name: 'Jupyter' }],
    });
    expect(t.portsConfig).toEqual([{ port: '8888', name: 'Jupyter' }]);
    const update = (changes: Record<string, unknown>) =>
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: t.id,
        changes: changes as never,
      });
    for (const portsConfig of [
      [{ port: '9999', name: 'nothing there' }],
      [
        { port: '22', name: 'ssh' },
        { port: '22', name: 'again' },
      ],
      [{ port: '22/tcp', name: 'not a number' }],
    ]) {
      await expect(update({ portsConfig })).rejects.toMatchObject({ status: 400 });
    }
    expect((await update({ portsConfig: [{ port: '22', name: 'SSH' }] })).portsConfig).toEqual([
      { port: '22', name: 'SSH' },
    ]);
    expect((await update({ ports: ['8888/http'] })).portsConfig).toEqual([]);
  });

  it('a serverless template has no volume: volumeInGb defaults to 0 and anything else is 400', async () => {
    expect(await create(ALICE, { name: uniq('sls'), isServerless: true })).toMatchObject({
      isServerless: true,
      volumeInGb: 0,
    });
    await expect(
      create(ALICE, { name: uniq('sls-vol'), isServerless: true, volumeInGb: 20 }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'volumeInGb' })],
    });
    const t = await create(ALICE, { name: uniq('sls-upd'), isServerless: true, volumeInGb: 0 });
    await expect(
      server.bus.request(TemplateRpc.update, {
        ownerId: ALICE,
        templateId: t.id,
        changes: { volumeInGb: 5 },
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('keeps every revision: get answers a past one (while the template is readable), and with withRevision says the current one and who owns it', async () => {
    const v1 = await create(ALICE, {
      name: uniq('rev'),
      isPublic: true,
      dockerStartCmd: ['run', 'v1'],
      env: { RELEASE: 'v1' },
    });
    const get = (ownerId: string, extra: Record<string, unknown> = {}) =>
      server.bus.request(TemplateRpc.get, { ownerId, templateId: v1.id, ...extra });
    expect(await get(BOB, { withRevision: true })).toEqual({ ...v1, revision: 1, owned: false });
    expect(await get(ALICE, { withRevision: true })).toEqual({ ...v1, revision: 1, owned: true });

    const v2 = await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: v1.id,
      changes: { dockerStartCmd: ['run', 'v2'], env: { RELEASE: 'v2' }, readme: 'new' },
    });
    // Nothing changed: no new revision.
    await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: v1.id,
      changes: { env: { RELEASE: 'v2' } },
    });
    expect(await get(BOB)).toEqual(v2); // no revision fields unless asked (REST shows this answer)
    expect(await get(BOB, { withRevision: true })).toMatchObject({ revision: 2, owned: false });
    // Revision 1 runs what it ran; name, readme and visibility are the template's current ones.
    expect(await get(BOB, { revision: 1 })).toEqual({
      ...v2,
      dockerStartCmd: ['run', 'v1'],
      env: { RELEASE: 'v1' },
    });
    expect(await get(BOB, { revision: 2 })).toEqual(v2);
    await expect(get(BOB, { revision: 3 })).rejects.toMatchObject({
      status: 404,
      message: `template ${v1.id} has no revision 3`,
    });
    // Private again: no revision of it is readable by others.
    await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: v1.id,
      changes: { isPublic: false },
    });
    await expect(get(BOB, { revision: 1 })).rejects.toMatchObject({ status: 404 });
    expect(await get(ALICE, { revision: 1 })).toMatchObject({ env: { RELEASE: 'v1' } });
    await expect(get(ALICE, { revision: 0 })).rejects.toMatchObject({ status: 400 });
  });

  it('keeps the event when publishing fails, and a later relay pass publishes it once', async () => {
    const t = await create(ALICE, { name: uniq('outbox') });
    events.length = 0;
    const publish = jest.spyOn(server.bus, 'publish').mockRejectedValueOnce(new Error('bus down'));
    const updated = await server.bus.request(TemplateRpc.update, {
      ownerId: ALICE,
      templateId: t.id,
      changes: { readme: 'v2' },
    });
    expect(updated.readme).toBe('v2'); // the change itself stands
    expect(publish).toHaveBeenCalledTimes(1);
    const [pending] = await db.outboxEvent.findMany();
    expect(pending).toMatchObject({
      subject: TemplateEvents.updated.subject,
      payload: { templateId: t.id, ownerId: ALICE, revision: 2 },
      attempts: 1,
    });
    expect(events).toHaveLength(0);

    // Still leased to the relay that failed: a pass now leaves it alone ...
    relay.kick();
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toHaveLength(0);
    // ... until the lease runs out (as after a crash between write and publish).
    await db.outboxEvent.update({
      where: { id: pending.id },
      data: { claimedUntil: new Date(Date.now() - 1) },
    });
    relay.kick();
    await waitForEvents(1);
    expect(events.map((e) => [e.id, e.payload])).toEqual([
      [pending.id, { templateId: t.id, ownerId: ALICE, revision: 2 }],
    ]);
    expect(await db.outboxEvent.count()).toBe(0);
  });
});
