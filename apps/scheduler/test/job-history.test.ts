import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DeliveredEvent, Subscription } from '@runplane/bus';
import { JobEvents, SchedulerRpc, type JobEvent, type JobFinishedEvent } from '@runplane/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { JobTimersRepository } from '../src/store/job-timers.repository.js';
import { OTHER, OWNER, startHarness, until, type Harness } from './support.js';

/** A job's history (jobs.events) and the bounded requeues of jobs whose worker is lost. */
describe('scheduler: job history and bounded requeues', () => {
  let h: Harness;
  let consumer: Subscription;
  const finished: Array<DeliveredEvent<JobFinishedEvent>> = [];
  const hook = 'https://hooks.example.test/runplane';

  beforeAll(async () => {
    // A long ping interval: workers here hold jobs without pinging; losses are explicit.
    h = await startHarness({
      RUNPLANE_WORKER_PING_INTERVAL_MS: '60000',
      RUNPLANE_JOB_MAX_ATTEMPTS: '2',
    });
    consumer = await h.server.bus.consume(JobEvents.finished, 'webhook-sender', async (e) => {
      finished.push(e);
    });
  }, 90_000);
  afterAll(async () => {
    await consumer?.stop();
    await h?.stop();
  });

  const events = (endpointId: string, jobId: string, ownerId = OWNER) =>
    h.call(SchedulerRpc.jobEvents, { ownerId, endpointId, jobId });
  const summary = (list: JobEvent[]) => list.map((e) => [e.type, e.workerId, e.detail] as const);
  const status = (endpointId: string, jobId: string) =>
    h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId });
  const take = (endpointId: string, workerId: string) =>
    h
      .call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize: 1, waitMs: 0 })
      .then((r) => r.jobs.map((j) => j.id));
  const done = (endpointId: string, workerId: string, jobId: string, body: object) =>
    h.call(SchedulerRpc.jobDone, { endpointId, workerId, jobId, body, isStream: false } as never);
  const unhealthy = (endpointId: string, workerId: string) =>
    h.call(SchedulerRpc.ping, { endpointId, workerId, jobIds: [], status: 'unhealthy' } as never);

  it('a completed job: SUBMITTED, TAKEN by its worker, one PROGRESS for quick updates, COMPLETED; oldest first, ISO times', async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep, { secret: 'do-not-record' });
    expect(await take(ep, 'w-a')).toEqual([id]);
    await done(ep, 'w-a', id, { status: 'IN_PROGRESS', output: { step: 1 } });
    await done(ep, 'w-a', id, { status: 'IN_PROGRESS', output: { step: 2 } });
    await done(ep, 'w-a', id, { output: { result: 'private-output' } });
    const list = await events(ep, id);
    expect(summary(list)).toEqual([
      ['SUBMITTED', null, null],
      ['TAKEN', 'w-a', null],
      ['PROGRESS', 'w-a', null],
      ['COMPLETED', 'w-a', null],
    ]);
    for (const e of list) expect(new Date(e.at).toISOString()).toBe(e.at);
    const text = JSON.stringify(list);
    expect(text).not.toContain('do-not-record');
    expect(text).not.toContain('private-output');
  });

  it('a job with a webhook finishing FAILED through the general path is recorded too', async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep, { n: 1 }, { webhook: hook });
    await take(ep, 'w-b');
    await done(ep, 'w-b', id, { error: 'boom' });
    expect(summary(await events(ep, id)).map((e) => e[0])).toEqual([
      'SUBMITTED',
      'TAKEN',
      'FAILED',
    ]);
  });

  it('a cancelled running job: STOP_SENT to its worker, then CANCELLED', async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep);
    await take(ep, 'w-c');
    await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: id });
    expect(summary(await events(ep, id))).toEqual([
      ['SUBMITTED', null, null],
      ['TAKEN', 'w-c', null],
      ['STOP_SENT', 'w-c', 'cancelled'],
      ['CANCELLED', 'w-c', null],
    ]);
  });

  it('retried and given back: RETRIED after the failure, REQUEUED when the job-take answer is given back, no attempt counted', async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep);
    await take(ep, 'w-d');
    await done(ep, 'w-d', id, { error: 'first try failed' });
    await h.call(SchedulerRpc.retryJob, { ownerId: OWNER, endpointId: ep, jobId: id });
    await take(ep, 'w-e');
    await h.call(SchedulerRpc.releaseJobs, { endpointId: ep, workerId: 'w-e', jobIds: [id] });
    expect(summary(await events(ep, id))).toEqual([
      ['SUBMITTED', null, null],
      ['TAKEN', 'w-d', null],
      ['FAILED', 'w-d', null],
      ['RETRIED', null, null],
      ['TAKEN', 'w-e', null],
      ['REQUEUED', 'w-e', 'given back: the job-take answer never reached the worker'],
    ]);
    // The given-back take does not count: two losses more are needed to fail it (max 2 attempts).
    await take(ep, 'w-f');
    await unhealthy(ep, 'w-f');
    expect((await status(ep, id)).status).toBe('IN_QUEUE');
  });

  it("another user's job, an unknown job, another endpoint's job: 404", async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep);
    const other = await h.endpoint();
    for (const [endpointId, jobId, ownerId] of [
      [ep, id, OTHER],
      [ep, 'no-such-job', OWNER],
      [other, id, OWNER],
    ]) {
      const err = await h.error(SchedulerRpc.jobEvents, { ownerId, endpointId, jobId });
      expect(err.status).toBe(404);
    }
  });

  it("jobs.detail: the owner's job with its input, mode and webhook beside its /status record; anyone else's 404", async () => {
    const ep = await h.endpoint();
    const input = { prompt: 'hello', nested: { n: [1, 2] } };
    const id = await h.submit(ep, input, { webhook: hook });
    await take(ep, 'w-d');
    await done(ep, 'w-d', id, { output: { ok: true } });
    const detail = await h.call(SchedulerRpc.jobDetail, {
      ownerId: OWNER,
      endpointId: ep,
      jobId: id,
    });
    expect(detail).toMatchObject({
      id,
      status: 'COMPLETED',
      output: { ok: true },
      input,
      mode: 'run',
      webhook: hook,
      workerId: 'w-d',
    });
    expect(new Date(detail.createdAt).toISOString()).toBe(detail.createdAt);
    for (const [ownerId, endpointId, jobId] of [
      [OTHER, ep, id],
      [OWNER, await h.endpoint(), id],
      [OWNER, ep, 'no-such-job'],
    ]) {
      const err = await h.error(SchedulerRpc.jobDetail, { ownerId, endpointId, jobId });
      expect(err.status).toBe(404);
    }
  });

  it('a job whose worker is lost RUNPLANE_JOB_MAX_ATTEMPTS times ends FAILED saying so, and its webhook fires', async () => {
    const ep = await h.endpoint();
    const id = await h.submit(ep, { n: 1 }, { webhook: hook });
    await take(ep, 'w-g');
    await unhealthy(ep, 'w-g');
    expect(await status(ep, id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    await take(ep, 'w-h');
    await unhealthy(ep, 'w-h');
    const failed = await status(ep, id);
    const error =
      "the job's worker was lost 2 times while running it (RUNPLANE_JOB_MAX_ATTEMPTS=2); last: worker unhealthy: it failed its fitness check";
    expect(failed).toMatchObject({ status: 'FAILED', error });
    expect(summary(await events(ep, id))).toEqual([
      ['SUBMITTED', null, null],
      ['TAKEN', 'w-g', null],
      ['REQUEUED', 'w-g', 'worker unhealthy: it failed its fitness check'],
      ['TAKEN', 'w-h', null],
      ['FAILED', 'w-h', error],
    ]);
    const e = await until(
      async () => finished.find((f) => f.payload.jobId === id),
      15_000,
      `job.finished of ${id}`,
    );
    expect(e.payload.status).toBe('FAILED');
    expect(JSON.parse(e.payload.body)).toMatchObject({ id, status: 'FAILED', error });
    // The worker, should it come back, is told to drop it; the job is not handed out again.
    expect(
      await h.call(SchedulerRpc.stopJobs, { endpointId: ep, workerId: 'w-h', waitMs: 0 }),
    ).toEqual({ jobsToStop: [id] });
    expect(await take(ep, 'w-i')).toEqual([]);
    // A manual retry gives it a fresh budget.
    await h.call(SchedulerRpc.retryJob, { ownerId: OWNER, endpointId: ep, jobId: id });
    await take(ep, 'w-i');
    await unhealthy(ep, 'w-i');
    expect((await status(ep, id)).status).toBe('IN_QUEUE');
  });
  // Last: it expires every job of this harness.
  it('a job deleted for good takes its history with it: purged, its endpoint deleted, its tombstone forgotten', async () => {
    const db = h.server.app.get(PrismaClient, { strict: false });
    const eventsOf = (ids: string[]) => db.jobEvent.count({ where: { jobId: { in: ids } } });
    const purgedEp = await h.endpoint();
    const purged = [await h.submit(purgedEp), await h.submit(purgedEp)];
    const removedEp = await h.endpoint();
    const removed = await h.submit(removedEp);
    const expiredEp = await h.endpoint();
    const expired = await h.submit(expiredEp);
    expect(await eventsOf([...purged, removed, expired])).toBe(4);

    await h.call(SchedulerRpc.purgeQueue, { ownerId: OWNER, endpointId: purgedEp });
    await h.call(SchedulerRpc.deleteEndpoint, { ownerId: OWNER, endpointId: removedEp });
    expect(await eventsOf([...purged, removed])).toBe(0);

    const timers = h.server.app.get(JobTimersRepository, { strict: false });
    const day = 86_400_000;
    await timers.expire(new Date(Date.now() + 30 * day)); // past every TTL: a tombstone
    expect(await eventsOf([expired])).toBe(2); // SUBMITTED, EXPIRED
    await timers.cleanup(new Date(Date.now() + 31 * day));
    expect(await db.job.count({ where: { id: expired } })).toBe(0);
    expect(await eventsOf([expired])).toBe(0);
  });
});
