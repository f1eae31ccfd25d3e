import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { DeliveredEvent, Subscription } from '@runplane/bus';
import { JobEvents, SchedulerRpc, type JobFinishedEvent } from '@runplane/contracts';
import { OutboxRelay } from '@runplane/database';
import { scratchDatabase } from '@runplane/platform';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { JobEffects } from '../src/store/job-effects.js';
import { OWNER, startHarness, until, type Harness } from './support.js';

const pgUp = await requireService('postgres', 'job.finished.v1 on PostgreSQL');
const database = scratchDatabase('scheduler', POSTGRES_URL, uniqueName('runplane_finished_test'));

finishedSuite('the embedded database', {});
if (pgUp) finishedSuite('PostgreSQL', { DATABASE_URL_SCHEDULER: database.url });
afterAll(async () => {
  if (pgUp) await database.drop();
});

/** Every final state of a job with a webhook is announced (job.finished.v1) through the scheduler's outbox. */
function finishedSuite(name: string, env: Record<string, string>) {
  describe(`scheduler: job.finished.v1 through the outbox (${name})`, () => {
    let h: Harness;
    let consumer: Subscription;
    const events: Array<DeliveredEvent<JobFinishedEvent>> = [];
    const hook = 'https://hooks.example.test/runplane';

    beforeAll(async () => {
      // A long ping interval: these tests hold jobs without pinging.
      h = await startHarness({ ...env, RUNPLANE_WORKER_PING_INTERVAL_MS: '60000' });
      consumer = await h.server.bus.consume(JobEvents.finished, 'webhook-sender', async (e) => {
        events.push(e);
      });
    }, 90_000);
    afterAll(async () => {
      await consumer?.stop();
      await h?.stop();
    });

    const status = (endpointId: string, jobId: string) =>
      h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId });
    const take = (endpointId: string, workerId: string) =>
      h
        .call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize: 1, waitMs: 0 })
        .then((r) => r.jobs);
    const eventFor = (jobId: string) =>
      until(
        async () => events.find((e) => e.payload.jobId === jobId),
        15_000,
        `job.finished of ${jobId}`,
      );

    it('COMPLETED: the body is the /status object plus input and webhook, byte for byte', async () => {
      const ep = await h.endpoint();
      const input = { z: 1, a: 'nul \u0000 and é', nested: { b: [1, 2], a: null } };
      const id = await h.submit(ep, input, { webhook: hook });
      await take(ep, 'w1');
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w1',
        jobId: id,
        body: { output: { y: 2, x: 'out' } },
        isStream: false,
      });
      const e = await eventFor(id);
      expect(e.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(e.payload).toMatchObject({
        jobId: id,
        endpointId: ep,
        ownerId: OWNER,
        status: 'COMPLETED',
        webhook: hook,
      });
      expect(e.payload.body).toBe(
        JSON.stringify({ ...(await status(ep, id)), input, webhook: hook }),
      );
      expect(JSON.parse(e.payload.body)).toMatchObject({
        id,
        status: 'COMPLETED',
        output: { y: 2, x: 'out' },
        workerId: 'w1',
        retries: 0,
      });
      // Published and removed from the outbox.
      const db = h.server.app.get(PrismaClient, { strict: false });
      await until(async () => (await db.outboxEvent.count()) === 0, 10_000, 'an empty outbox');
    });

    it('a result for a job this replica did not hand out (another replica did) is announced too', async () => {
      const ep = await h.endpoint();
      const id = await h.submit(ep, { elsewhere: true }, { webhook: hook });
      await take(ep, 'w-other');
      // What this replica knows when another one handed the job out: not that it has a webhook.
      h.server.app.get(JobEffects, { strict: false }).handedWithWebhook(id);
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w-other',
        jobId: id,
        body: { output: 'done' },
        isStream: false,
      });
      expect(JSON.parse((await eventFor(id)).payload.body)).toMatchObject({
        id,
        status: 'COMPLETED',
        output: 'done',
        input: { elsewhere: true },
      });
    });

    it('FAILED, CANCELLED and TIMED_OUT are announced too; a job without webhook is not', async () => {
      const ep = await h.endpoint();
      const failed = await h.submit(ep, { f: 1 }, { webhook: hook });
      await take(ep, 'w2');
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w2',
        jobId: failed,
        body: { error: 'boom' },
        isStream: false,
      });
      const cancelled = await h.submit(ep, { c: 1 }, { webhook: `${hook}?c=1` });
      await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: cancelled });
      const silent = await h.submit(ep, { s: 1 });
      await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: silent });
      const slow = await h.submit(
        ep,
        { t: 1 },
        { webhook: hook, policy: { executionTimeout: 5000 } },
      );
      await take(ep, 'w3');

      expect(JSON.parse((await eventFor(failed)).payload.body)).toMatchObject({
        id: failed,
        status: 'FAILED',
        error: 'boom',
        input: { f: 1 },
        webhook: hook,
      });
      expect(JSON.parse((await eventFor(cancelled)).payload.body)).toEqual({
        id: cancelled,
        status: 'CANCELLED',
        retries: 0,
        input: { c: 1 },
        webhook: `${hook}?c=1`,
      });
      const timedOut = await eventFor(slow); // the sweeper's bulk statement
      expect(timedOut.payload.status).toBe('TIMED_OUT');
      expect(JSON.parse(timedOut.payload.body)).toEqual({
        ...(await status(ep, slow)),
        input: { t: 1 },
        webhook: hook,
      });
      expect(events.some((e) => e.payload.jobId === silent)).toBe(false);
    }, 30_000);

    it('an event whose publish fails stays in the outbox and is published later with the same id', async () => {
      const relay = h.server.app.get(OutboxRelay, { strict: false });
      const db = h.server.app.get(PrismaClient, { strict: false });
      const publish = jest
        .spyOn(h.server.bus, 'publish')
        .mockRejectedValueOnce(new Error('bus down'));
      const ep = await h.endpoint();
      const id = await h.submit(ep, { p: 1 }, { webhook: hook });
      await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: id });
      await until(async () => publish.mock.calls.length >= 1, 10_000, 'a publish attempt');
      const [pending] = await until(
        async () => {
          const rows = await db.outboxEvent.findMany();
          return rows.length ? rows : null;
        },
        10_000,
        'the kept row',
      );
      expect(events.some((e) => e.payload.jobId === id)).toBe(false);
      publish.mockRestore();
      // Leased by the failed pass; once the lease runs out (as after a crash) the relay publishes it.
      await db.outboxEvent.update({
        where: { id: pending.id },
        data: { claimedUntil: new Date(Date.now() - 1) },
      });
      relay.kick();
      expect((await eventFor(id)).id).toBe(pending.id);
      await until(async () => (await db.outboxEvent.count()) === 0, 10_000, 'an empty outbox');
    });
  });
}
