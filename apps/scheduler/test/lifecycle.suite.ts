import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRpc } from '@runplane/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { JobChanges } from '../src/shared/job-changes.js';
import { JobCountsRepository } from '../src/store/job-counts.repository.js';
import { SchedulerTables } from '../src/store/scheduler-tables.js';
import { WorkersRepository } from '../src/store/workers.repository.js';
import { OTHER, OWNER, sleep, startHarness, until, type Harness } from './support.js';

/**
 * The job state machine and the worker protocol driven over the bus, as queue-api drives them.
 * Run on the embedded database and on a real PostgreSQL (lifecycle.*.test.ts).
 */
export function lifecycleSuite(name: string, env: () => Promise<Record<string, string> | null>) {
  describe(`job lifecycle over the bus (${name})`, () => {
    let h: Harness;
    let skip = false;
    beforeAll(async () => {
      const e = await env();
      if (!e) {
        skip = true;
        return;
      }
      // A long ping interval: these tests hold jobs without pinging.
      h = await startHarness({ RUNPLANE_WORKER_PING_INTERVAL_MS: '60000', ...e });
    }, 90_000);
    afterAll(async () => {
      await h?.stop();
    });

    const status = (endpointId: string, jobId: string) =>
      h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId });
    const take = (endpointId: string, workerId: string, batchSize = 1, waitMs = 0) =>
      h
        .call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize, waitMs }, waitMs + 10_000)
        .then((r) => r.jobs);
    const done = (
      endpointId: string,
      workerId: string,
      jobId: string,
      body: Record<string, unknown>,
    ) => h.call(SchedulerRpc.jobDone, { endpointId, workerId, jobId, body, isStream: false });
    const health = (endpointId: string) =>
      h.call(SchedulerRpc.health, { ownerId: OWNER, endpointId });
    /** A job taken by `workerId` (the only queued job of a fresh endpoint). */
    const running = async (
      input: Record<string, unknown> = { n: 1 },
      workerId = 'w-run',
      extra: Record<string, unknown> = {},
    ) => {
      const ep = await h.endpoint();
      const id = await h.submit(ep, input, extra);
      expect((await take(ep, workerId)).map((j) => j.id)).toEqual([id]);
      return { ep, id };
    };
    const guard = () => {
      if (skip) console.warn(`skipped: ${name} not available`);
      return skip;
    };

    describe('submit and status', () => {
      it("queues a job on the caller's endpoint; unknown or foreign endpoints are 404", async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const id = await h.submit(ep, { a: [1, 'two', null], nested: { z: 1, a: 2 } });
        expect(await status(ep, id)).toEqual({ id, status: 'IN_QUEUE', retries: 0 });
        const unknown = await h.error(SchedulerRpc.submitJob, {
          ownerId: OWNER,
          endpointId: 'nope',
          jobId: 'j-x',
          mode: 'run',
          job: { input: {} } as never,
        });
        expect([unknown.status, unknown.code]).toEqual([404, 'ENDPOINT_NOT_FOUND']);
        const foreign = await h.error(SchedulerRpc.submitJob, {
          ownerId: OTHER,
          endpointId: ep,
          jobId: 'j-y',
          mode: 'run',
          job: { input: {} } as never,
        });
        expect(foreign.status).toBe(404);
        const invalid = await h.error(SchedulerRpc.submitJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: 'j-z',
          mode: 'run',
          job: { input: 'text' } as never,
        });
        expect(invalid.status).toBe(400);
      });

      it('a repeated submission with the same id is one job; the id on another endpoint is a conflict', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const other = await h.endpoint();
        const req = {
          ownerId: OWNER,
          endpointId: ep,
          jobId: `dup-${Date.now()}`,
          mode: 'run' as const,
          job: { input: { n: 1 } } as never,
        };
        expect(await h.call(SchedulerRpc.submitJob, req)).toEqual({
          id: req.jobId,
          status: 'IN_QUEUE',
        });
        expect(await h.call(SchedulerRpc.submitJob, req)).toEqual({
          id: req.jobId,
          status: 'IN_QUEUE',
        });
        expect((await health(ep)).jobs.inQueue).toBe(1);
        expect((await h.error(SchedulerRpc.submitJob, { ...req, endpointId: other })).status).toBe(
          409,
        );
      });

      it('concurrent submissions (grouped into shared statements) each get their own job; repeats of one id are one job', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const other = await h.endpoint();
        const base = `c-${Date.now()}`;
        const submit = (endpointId: string, jobId: string, n: number) =>
          h.call(SchedulerRpc.submitJob, {
            ownerId: OWNER,
            endpointId,
            jobId,
            mode: 'run',
            job: { input: { n, text: `é\u0000${n}` } } as never,
          });
        const answers = await Promise.allSettled([
          ...Array.from({ length: 30 }, (_, i) => submit(ep, `${base}-${i}`, i)),
          submit(ep, `${base}-0`, 0),
          submit(ep, `${base}-0`, 0), // repeats, in the same batch or the next
          submit(other, `${base}-1`, 1), // the same id on another endpoint
        ]);
        expect(answers.slice(0, 32).map((a) => a.status)).toEqual(Array(32).fill('fulfilled'));
        expect(answers[32]).toMatchObject({
          status: 'rejected',
          reason: expect.objectContaining({ status: 409 }),
        });
        expect((await health(ep)).jobs.inQueue).toBe(30);
        expect((await health(other)).jobs.inQueue).toBe(0);
        const jobs = await take(ep, 'w-batch', 30);
        expect(jobs.map((j) => j.input).sort((a, b) => Number(a.n) - Number(b.n))).toEqual(
          Array.from({ length: 30 }, (_, n) => ({ n, text: `é\u0000${n}` })),
        );
        // Each job carries its own input (a batch's columns and inputs are zipped by position).
        for (const j of jobs) expect(j.id).toBe(`${base}-${j.input.n}`);
        // Results of many jobs at once, and the same result posted twice: each job finishes once.
        await Promise.all(
          jobs.flatMap((j) => [
            done(ep, 'w-batch', j.id, { output: j.input.n }),
            done(ep, 'w-batch', j.id, { output: -1 }),
          ]),
        );
        for (const j of jobs)
          expect(await status(ep, j.id)).toMatchObject({ status: 'COMPLETED', output: j.input.n });
        expect((await health(ep)).jobs).toMatchObject({ completed: 30, inProgress: 0, inQueue: 0 });
      });

      it('a job is visible only through its endpoint and to its owner', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const other = await h.endpoint();
        const id = await h.submit(ep);
        expect(
          (await h.error(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: other, jobId: id }))
            .status,
        ).toBe(404);
        expect(
          (await h.error(SchedulerRpc.getJob, { ownerId: OTHER, endpointId: ep, jobId: id }))
            .status,
        ).toBe(404);
        const missing = await h.error(SchedulerRpc.getJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: 'missing',
        });
        expect([missing.status, missing.code]).toEqual([404, 'JOB_NOT_FOUND']);
      });

      it('/status?ttl= sets the TTL (within the policy bounds)', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const id = await h.submit(ep);
        expect(
          (
            await h.call(SchedulerRpc.getJob, {
              ownerId: OWNER,
              endpointId: ep,
              jobId: id,
              ttlMs: 60_000,
            })
          ).status,
        ).toBe('IN_QUEUE');
        const bad = await h.error(SchedulerRpc.getJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: id,
          ttlMs: 5,
        });
        expect([bad.status, bad.details?.[0]?.path]).toEqual([400, 'ttlMs']);
        expect((await status(ep, id)).status).toBe('IN_QUEUE'); // its elapsing is in timers.test.ts
      });
    });

    describe('worker protocol', () => {
      it('take hands out {id, input} plus webhook/s3Config/policy only when the request had them', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const plain = await h.submit(ep, { p: 1 });
        const rich = await h.submit(
          ep,
          { r: 1 },
          {
            webhook: 'http://127.0.0.1:9/hook',
            s3Config: { bucketName: 'b', accessId: 'a' },
            policy: { ttl: 60_000, lowPriority: false },
          },
        );
        const jobs = await take(ep, 'w1', 5);
        expect(jobs).toEqual([
          { id: plain, input: { p: 1 } },
          {
            id: rich,
            input: { r: 1 },
            webhook: 'http://127.0.0.1:9/hook',
            s3Config: { bucketName: 'b', accessId: 'a' },
            policy: { ttl: 60_000, lowPriority: false },
          },
        ]);
        const rec = await status(ep, plain);
        expect(rec).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w1' });
        expect(typeof rec.delayTime).toBe('number');
      });

      it('take returns the oldest jobs first, low priority after normal, at most batchSize', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const low = await h.submit(ep, { n: 0 }, { policy: { lowPriority: true } });
        const a = await h.submit(ep, { n: 1 });
        const b = await h.submit(ep, { n: 2 });
        const c = await h.submit(ep, { n: 3 });
        expect((await take(ep, 'w1', 2)).map((j) => j.id)).toEqual([a, b]);
        expect((await take(ep, 'w2', 5)).map((j) => j.id)).toEqual([c, low]);
        expect(await take(ep, 'w3', 5)).toEqual([]);
      });

      it('an empty take long-polls for waitMs, and wakes at once when a job arrives', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const t0 = Date.now();
        expect(await take(ep, 'w1', 1, 400)).toEqual([]);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
        const waiting = take(ep, 'w1', 1, 20_000);
        await sleep(200);
        const id = await h.submit(ep);
        const submitted = Date.now();
        expect((await waiting).map((j) => j.id)).toEqual([id]);
        // woken by the submission, not by the end of its 20 s wait
        expect(Date.now() - submitted).toBeLessThan(10_000);
      });

      it('a job submitted while a take waits is stored running on that worker and handed over; never to a worker on its way out', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const waiting = take(ep, 'w-hand', 4, 20_000);
        // The take must be waiting, or the job is queued and claimed instead (delayTime > 0).
        const changes = h.server.app.get(JobChanges, { strict: false });
        await until(async () => changes.waitingTakes(ep) === 1, 10_000, 'the job-take waiting');
        const id = `hand-${Date.now()}`;
        const submitted = await h.call(SchedulerRpc.submitJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: id,
          mode: 'run',
          job: { input: { handed: true } } as never,
        });
        expect(submitted).toEqual({ id, status: 'IN_QUEUE' }); // what /run answers (spec), though it runs already
        expect(await waiting).toEqual([{ id, input: { handed: true } }]);
        expect(await status(ep, id)).toMatchObject({
          status: 'IN_PROGRESS',
          workerId: 'w-hand',
          delayTime: 0,
        });
        await done(ep, 'w-hand', id, { output: 'ok' });
        expect(await status(ep, id)).toMatchObject({ status: 'COMPLETED', output: 'ok' });

        // The scheduler stops the worker while its take waits (a write that wakes no poll).
        const again = take(ep, 'w-hand', 1, 1500);
        await sleep(200);
        await h.server.app
          .get(WorkersRepository, { strict: false })
          .markStopped(ep, 'w-hand', 'idle', new Date());
        const next = await h.submit(ep);
        expect(await again).toEqual([]);
        expect((await status(ep, next)).status).toBe('IN_QUEUE');
        expect((await take(ep, 'w-other')).map((j) => j.id)).toEqual([next]);
      });

      it('concurrent takes never hand out the same job (SKIP LOCKED)', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const ids = [];
        for (let i = 0; i < 30; i++) ids.push(await h.submit(ep, { i }));
        const takers = Array.from({ length: 12 }, (_, i) => take(ep, `w-${i}`, 3, 300));
        const got = (await Promise.all(takers)).flat().map((j) => j.id);
        expect(got.length).toBe(30);
        expect(new Set(got).size).toBe(30);
        expect([...got].sort()).toEqual([...ids].sort());
      });

      it('release puts jobs back without counting a retry', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        await h.call(SchedulerRpc.releaseJobs, { endpointId: ep, workerId: 'w-run', jobIds: [id] });
        expect(await status(ep, id)).toEqual({ id, status: 'IN_QUEUE', retries: 0 });
        expect((await take(ep, 'w-2')).map((j) => j.id)).toEqual([id]);
      });

      it('progress shows IN_PROGRESS with output; the first final post wins; later posts change nothing', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        expect(await done(ep, 'w-run', id, { status: 'IN_PROGRESS', output: { pct: 50 } })).toEqual(
          { ok: true },
        );
        expect(await status(ep, id)).toMatchObject({ status: 'IN_PROGRESS', output: { pct: 50 } });
        await done(ep, 'w-run', id, { output: 'first' });
        expect(await done(ep, 'w-run', id, { output: 'first' })).toEqual({ ok: true });
        await done(ep, 'w-run', id, { output: 'second' });
        await done(ep, 'w-run', id, { error: 'late error' });
        await done(ep, 'w-run', id, { status: 'IN_PROGRESS', output: { pct: 99 } });
        const rec = await status(ep, id);
        expect(rec).toMatchObject({ status: 'COMPLETED', output: 'first', workerId: 'w-run' });
        expect(rec.error).toBeUndefined();
        expect(rec.executionTime).toBeGreaterThanOrEqual(0);
      });

      it('{error} makes the job FAILED with a string error (non-strings as JSON); output kept alongside', async () => {
        if (guard()) return;
        const a = await running();
        await done(a.ep, 'w-run', a.id, { error: 'boom' });
        expect(await status(a.ep, a.id)).toMatchObject({ status: 'FAILED', error: 'boom' });
        const b = await running();
        await done(b.ep, 'w-run', b.id, {
          error: { type: 'ValueError', line: 3 },
          output: { partial: true },
        });
        expect(await status(b.ep, b.id)).toMatchObject({
          status: 'FAILED',
          error: '{"type":"ValueError","line":3}',
          output: { partial: true },
        });
      });

      it("job-done: unknown job or another endpoint's job is 404; another worker's post is dropped", async () => {
        if (guard()) return;
        const { ep, id } = await running();
        expect(
          (
            await h.error(SchedulerRpc.jobDone, {
              endpointId: ep,
              workerId: 'w-run',
              jobId: 'nope',
              body: { output: 1 },
              isStream: false,
            })
          ).status,
        ).toBe(404);
        const other = await h.endpoint();
        expect(
          (
            await h.error(SchedulerRpc.jobDone, {
              endpointId: other,
              workerId: 'w-run',
              jobId: id,
              body: { output: 1 },
              isStream: false,
            })
          ).status,
        ).toBe(404);
        expect(await done(ep, 'intruder', id, { output: 'not mine' })).toEqual({ ok: true });
        expect((await status(ep, id)).status).toBe('IN_PROGRESS');
        const wrongOwner = await h.error(SchedulerRpc.takeJobs, {
          endpointId: ep,
          workerId: 'w',
          batchSize: 1,
          waitMs: 0,
          ownerId: OTHER,
        } as never);
        expect(wrongOwner.status).toBe(404);
      });

      it('stream chunks are drained in order, each once; a waiting /stream wakes on a chunk', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        const post = (output: unknown) =>
          h.call(SchedulerRpc.jobStream, {
            endpointId: ep,
            workerId: 'w-run',
            jobId: id,
            body: { output },
          });
        const stream = (waitMs = 0) =>
          h.call(
            SchedulerRpc.streamJob,
            { ownerId: OWNER, endpointId: ep, jobId: id, waitMs },
            waitMs + 10_000,
          );
        const t0 = Date.now();
        expect(await stream(300)).toEqual({ id, status: 'IN_PROGRESS', stream: [] });
        expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
        await post({ i: 0 });
        await post({ i: 1 });
        expect((await stream()).stream).toEqual([{ output: { i: 0 } }, { output: { i: 1 } }]);
        const waiting = stream(20_000);
        await sleep(200);
        await post({ i: 2 });
        const posted = Date.now();
        expect((await waiting).stream).toEqual([{ output: { i: 2 } }]);
        expect(Date.now() - posted).toBeLessThan(10_000);
        await done(ep, 'w-run', id, { output: [] });
        // final and drained: nothing again, and no waiting
        const t1 = Date.now();
        expect(await stream(20_000)).toEqual({ id, status: 'COMPLETED', stream: [] });
        expect(Date.now() - t1).toBeLessThan(10_000);
        // chunks after the end are dropped
        await post({ i: 3 });
        expect((await stream()).stream).toEqual([]);
      });

      it("keeps stream posts of the job's worker only, numbers concurrent ones apart, 404s an unknown job", async () => {
        if (guard()) return;
        const { ep, id } = await running();
        const post = (workerId: string, output: unknown, jobId = id) =>
          h.call(SchedulerRpc.jobStream, { endpointId: ep, workerId, jobId, body: { output } });
        expect(await post('w-other', { stray: true })).toEqual({ ok: true }); // dropped
        await Promise.all([0, 1, 2, 3, 4].map((i) => post('w-run', i)));
        await post('w-run', null);
        const { stream } = await h.call(SchedulerRpc.streamJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: id,
          waitMs: 0,
        });
        expect(stream).toHaveLength(6);
        expect(stream.slice(0, 5).map((c) => c.output)).toEqual(
          expect.arrayContaining([0, 1, 2, 3, 4]),
        );
        expect(stream[5]).toEqual({ output: null });
        const unknown = await h.error(SchedulerRpc.jobStream, {
          endpointId: ep,
          workerId: 'w-run',
          jobId: 'no-such-job',
          body: { output: 1 },
        });
        expect(unknown.status).toBe(404);
      });

      it('a stream post over 1 MB becomes several chunks that concatenate to it', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        const text = 'é'.repeat(1_300_000); // 2.6 MB of UTF-8
        await h.call(SchedulerRpc.jobStream, {
          endpointId: ep,
          workerId: 'w-run',
          jobId: id,
          body: { output: text },
        });
        const s = await h.call(SchedulerRpc.streamJob, {
          ownerId: OWNER,
          endpointId: ep,
          jobId: id,
          waitMs: 0,
        });
        expect(s.stream.length).toBe(3);
        expect(s.stream.map((c) => c.output).join('')).toBe(text);
        for (const c of s.stream)
          expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(1024 * 1024);
      });

      it('await returns at once for a final job, after waitMs otherwise, and wakes on the result', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        const awaitJob = (waitMs: number) =>
          h.call(
            SchedulerRpc.awaitJob,
            { ownerId: OWNER, endpointId: ep, jobId: id, waitMs },
            waitMs + 10_000,
          );
        const t0 = Date.now();
        expect((await awaitJob(300)).status).toBe('IN_PROGRESS');
        expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
        const waiting = awaitJob(20_000);
        await sleep(200);
        await done(ep, 'w-run', id, { output: 42 });
        const finished = Date.now();
        expect(await waiting).toMatchObject({ id, status: 'COMPLETED', output: 42 });
        expect(Date.now() - finished).toBeLessThan(10_000);
        expect((await awaitJob(20_000)).status).toBe('COMPLETED');
      });

      it('runJobSync queues the job and returns its final record; past waitMs, the unfinished one; a repeat is the same job', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const runSync = (jobId: string, waitMs: number) =>
          h.call(
            SchedulerRpc.runJobSync,
            {
              ownerId: OWNER,
              endpointId: ep,
              jobId,
              mode: 'runsync',
              job: { input: { n: 7 } } as never,
              waitMs,
            },
            waitMs + 10_000,
          );
        const taking = take(ep, 'w-sync', 1, 20_000);
        const jobId = `sync-${Date.now()}`;
        const result = runSync(jobId, 20_000);
        const [job] = await taking;
        expect(job).toEqual({ id: jobId, input: { n: 7 } });
        await done(ep, 'w-sync', jobId, { output: { doubled: 14 } });
        expect(await result).toMatchObject({
          id: jobId,
          status: 'COMPLETED',
          output: { doubled: 14 },
        });

        const slow = `sync-slow-${Date.now()}`;
        expect(await runSync(slow, 300)).toMatchObject({ id: slow, status: 'IN_QUEUE' });
        expect(await runSync(slow, 300)).toMatchObject({ id: slow, status: 'IN_QUEUE' });
        expect((await health(ep)).jobs).toMatchObject({ inQueue: 1, completed: 1 });
        const unknown = await h.error(SchedulerRpc.runJobSync, {
          ownerId: OWNER,
          endpointId: 'nope',
          jobId: 'j-u',
          mode: 'runsync',
          job: { input: {} } as never,
          waitMs: 300,
        });
        expect([unknown.status, unknown.code]).toEqual([404, 'ENDPOINT_NOT_FOUND']);
      });

      it('ping keeps a worker known; jobs it reports but does not hold go to its stop channel', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        const other = await h.submit(ep);
        await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: other });
        await h.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w-run', jobIds: [id, other] });
        expect(
          await h.call(SchedulerRpc.stopJobs, { endpointId: ep, workerId: 'w-run', waitMs: 0 }),
        ).toEqual({ jobsToStop: [other] });
        expect((await status(ep, id)).status).toBe('IN_PROGRESS');
        await h.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w-external', jobIds: [] });
        const hh = await health(ep);
        expect(hh.workers).toMatchObject({ running: 1, idle: 1 });
      });

      it('a worker reporting itself unhealthy loses its jobs to the queue (retries + 1)', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        await h.call(SchedulerRpc.ping, {
          endpointId: ep,
          workerId: 'w-run',
          jobIds: [],
          status: 'unhealthy',
          reason: 'memory: 1 GB available',
        } as never);
        expect(await status(ep, id)).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
        expect((await health(ep)).workers.unhealthy).toBe(1);
        expect(
          await h.call(SchedulerRpc.stopJobs, { endpointId: ep, workerId: 'w-run', waitMs: 0 }),
        ).toEqual({ jobsToStop: [id] });
      });

      it('stopPod from an external worker: the job completes; the process may come back under its id', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        await done(ep, 'w-run', id, { output: 'bye', stopPod: true });
        expect(await status(ep, id)).toMatchObject({ status: 'COMPLETED', output: 'bye' });
        // (a managed worker is replaced by the autoscaler instead: autoscaler.test.ts)
        const next = await h.submit(ep);
        expect((await take(ep, 'w-run')).map((j) => j.id)).toEqual([next]);
      });
    });

    describe('cancel, retry, purge', () => {
      it('cancel a queued job: CANCELLED, no longer handed out; cancelling again answers the same', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const id = await h.submit(ep);
        const req = { ownerId: OWNER, endpointId: ep, jobId: id };
        expect(await h.call(SchedulerRpc.cancelJob, req)).toEqual({ id, status: 'CANCELLED' });
        expect(await h.call(SchedulerRpc.cancelJob, req)).toEqual({ id, status: 'CANCELLED' });
        expect(await take(ep, 'w1')).toEqual([]);
        expect((await status(ep, id)).status).toBe('CANCELLED');
        expect((await health(ep)).jobs.inQueue).toBe(0);
        const s = await h.call(SchedulerRpc.streamJob, { ...req, waitMs: 5000 });
        expect(s).toEqual({ id, status: 'CANCELLED', stream: [] });
      });

      it('cancel a running job: CANCELLED at once, its worker gets it once on job-stop, a late result is dropped', async () => {
        if (guard()) return;
        const { ep, id } = await running({ n: 1 }, 'w-c');
        await done(ep, 'w-c', id, { status: 'IN_PROGRESS', output: { pct: 10 } });
        const stop = h.call(
          SchedulerRpc.stopJobs,
          { endpointId: ep, workerId: 'w-c', waitMs: 20_000 },
          30_000,
        );
        await sleep(200);
        expect(
          await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: id }),
        ).toEqual({ id, status: 'CANCELLED' });
        const cancelledAt = Date.now();
        expect(await stop).toEqual({ jobsToStop: [id] });
        expect(Date.now() - cancelledAt).toBeLessThan(10_000);
        expect(
          await h.call(SchedulerRpc.stopJobs, { endpointId: ep, workerId: 'w-c', waitMs: 0 }),
        ).toEqual({ jobsToStop: [] });
        expect(await done(ep, 'w-c', id, { output: 'too late' })).toEqual({ ok: true });
        const rec = await status(ep, id);
        expect(rec.status).toBe('CANCELLED');
        expect(rec.output).toBeUndefined();
      });

      it('cancel of a finished job is 409; unknown is 404', async () => {
        if (guard()) return;
        const { ep, id } = await running();
        await done(ep, 'w-run', id, { output: 1 });
        expect(
          (await h.error(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: id }))
            .status,
        ).toBe(409);
        expect(
          (await h.error(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: 'nope' }))
            .status,
        ).toBe(404);
      });

      it('retry of a FAILED job: same id, IN_QUEUE, output, error and stream removed, retries counted, runs again', async () => {
        if (guard()) return;
        const { ep, id } = await running({ n: 7 });
        await h.call(SchedulerRpc.jobStream, {
          endpointId: ep,
          workerId: 'w-run',
          jobId: id,
          body: { output: 'partial' },
        });
        await done(ep, 'w-run', id, { error: 'bad', output: { x: 1 } });
        expect(
          await h.call(SchedulerRpc.retryJob, { ownerId: OWNER, endpointId: ep, jobId: id }),
        ).toEqual({ id, status: 'IN_QUEUE' });
        expect(await status(ep, id)).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
        expect(
          (
            await h.call(SchedulerRpc.streamJob, {
              ownerId: OWNER,
              endpointId: ep,
              jobId: id,
              waitMs: 0,
            })
          ).stream,
        ).toEqual([]);
        const again = await take(ep, 'w-2');
        expect(again).toEqual([{ id, input: { n: 7 } }]);
        await done(ep, 'w-2', id, { output: 'ok now' });
        expect(await status(ep, id)).toMatchObject({
          status: 'COMPLETED',
          output: 'ok now',
          retries: 1,
          workerId: 'w-2',
        });
        expect((await health(ep)).jobs).toMatchObject({ completed: 1, retried: 1 });
      });

      it('retry of COMPLETED, IN_QUEUE, IN_PROGRESS and CANCELLED jobs is 409; unknown is 404', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const retry = (jobId: string) =>
          h.error(SchedulerRpc.retryJob, { ownerId: OWNER, endpointId: ep, jobId });
        const queued = await h.submit(ep);
        const cancelled = await h.submit(ep);
        await h.call(SchedulerRpc.cancelJob, { ownerId: OWNER, endpointId: ep, jobId: cancelled });
        const [inProgress] = await take(ep, 'w1');
        expect(inProgress.id).toBe(queued);
        const completed = await h.submit(ep);
        await take(ep, 'w2');
        await done(ep, 'w2', completed, { output: 1 });
        const other = await h.submit(ep);
        for (const [jobId, st] of [
          [completed, 'COMPLETED'],
          [other, 'IN_QUEUE'],
          [queued, 'IN_PROGRESS'],
          [cancelled, 'CANCELLED'],
        ]) {
          const err = await retry(jobId);
          expect([err.status, err.code]).toEqual([409, 'JOB_NOT_RETRYABLE']);
          expect((await status(ep, jobId)).status).toBe(st);
        }
        expect((await retry('nope')).status).toBe(404);
      });

      it('purge removes only queued jobs and reports how many', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const run = await h.submit(ep);
        await take(ep, 'w1');
        const queued = [await h.submit(ep), await h.submit(ep), await h.submit(ep)];
        expect(await h.call(SchedulerRpc.purgeQueue, { ownerId: OWNER, endpointId: ep })).toEqual({
          removed: 3,
          status: 'completed',
        });
        for (const id of queued)
          expect(
            (await h.error(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: ep, jobId: id }))
              .status,
          ).toBe(404);
        expect((await status(ep, run)).status).toBe('IN_PROGRESS');
        expect(await h.call(SchedulerRpc.purgeQueue, { ownerId: OWNER, endpointId: ep })).toEqual({
          removed: 0,
          status: 'completed',
        });
        expect(
          (await h.error(SchedulerRpc.purgeQueue, { ownerId: OTHER, endpointId: ep })).status,
        ).toBe(404);
      });
    });

    describe('list and health', () => {
      /** `n` jobs submitted a few ms apart: their submission order is their createdAt order. */
      const submitApart = async (ep: string, n: number) => {
        const ids = [];
        for (let i = 0; i < n; i++) {
          ids.push(await h.submit(ep, { i }));
          await sleep(5);
        }
        return ids;
      };
      /** A `/requests` page of OWNER's endpoint, two jobs unless `extra` says otherwise. */
      const listOf = (ep: string, extra: Record<string, unknown> = {}) =>
        h.call(SchedulerRpc.listJobs, {
          ownerId: OWNER,
          endpointId: ep,
          limit: 2,
          ...extra,
        } as never);

      it('lists newest first with a cursor and a status filter', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const ids = await submitApart(ep, 5);
        const p1 = await listOf(ep);
        expect(p1.requests.map((r) => r.id)).toEqual([ids[4], ids[3]]);
        expect(p1.requests[0]).toEqual({
          id: ids[4],
          status: 'IN_QUEUE',
          createdAt: expect.any(String),
        });
        const p2 = await listOf(ep, { cursor: p1.nextCursor });
        expect(p2.requests.map((r) => r.id)).toEqual([ids[2], ids[1]]);
        const p3 = await listOf(ep, { cursor: p2.nextCursor });
        expect(p3).toEqual({
          requests: [expect.objectContaining({ id: ids[0] })],
          nextCursor: null,
        });
        const [t] = await take(ep, 'w1');
        await done(ep, 'w1', t.id, { output: 1 });
        const completed = await listOf(ep, { status: 'COMPLETED', limit: 10 });
        expect(completed.requests.map((r) => r.id)).toEqual([ids[0]]);
        expect(completed.requests[0]).toMatchObject({
          delayTime: expect.any(Number),
          executionTime: expect.any(Number),
        });
        const bad = await h.error(SchedulerRpc.listJobs, {
          ownerId: OWNER,
          endpointId: ep,
          limit: 2,
          cursor: 'garbage',
        });
        expect([bad.status, bad.details?.[0]?.path]).toEqual([400, 'cursor']);
        expect(
          (await h.error(SchedulerRpc.listJobs, { ownerId: OTHER, endpointId: ep, limit: 2 }))
            .status,
        ).toBe(404);
      });

      it('pages run across statuses in submission order (each status read from its index, merged)', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const ids = await submitApart(ep, 6);
        // The three oldest: COMPLETED, FAILED, IN_PROGRESS; the three newest stay IN_QUEUE.
        await take(ep, 'w1', 3);
        await done(ep, 'w1', ids[0], { output: 1 });
        await done(ep, 'w1', ids[1], { error: 'x' });
        const pages: Array<Array<[string, string]>> = [];
        let cursor: string | null | undefined;
        do {
          const page = await listOf(ep, cursor ? { cursor } : {});
          pages.push(page.requests.map((r) => [r.id, r.status]));
          cursor = page.nextCursor;
        } while (cursor);
        expect(pages).toEqual([
          [
            [ids[5], 'IN_QUEUE'],
            [ids[4], 'IN_QUEUE'],
          ],
          [
            [ids[3], 'IN_QUEUE'],
            [ids[2], 'IN_PROGRESS'],
          ],
          [
            [ids[1], 'FAILED'],
            [ids[0], 'COMPLETED'],
          ],
        ]);
        const running = await listOf(ep, { limit: 10, status: 'IN_PROGRESS' });
        expect(running.requests.map((r) => r.id)).toEqual([ids[2]]);
      });

      it('health counts jobs by state and workers by what they do', async () => {
        if (guard()) return;
        const ep = await h.endpoint();
        const zero = await health(ep);
        expect(zero).toEqual({
          jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
          workers: { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 },
        });
        const ids = [
          await h.submit(ep),
          await h.submit(ep),
          await h.submit(ep),
          await h.submit(ep),
        ];
        await take(ep, 'w1', 3);
        await done(ep, 'w1', ids[0], { output: 1 });
        await done(ep, 'w1', ids[1], { error: 'x' });
        await h.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w2', jobIds: [] });
        const hh = await health(ep);
        expect(hh.jobs).toEqual({ completed: 1, failed: 1, inProgress: 1, inQueue: 1, retried: 0 });
        expect(hh.workers).toMatchObject({ running: 1, idle: 1 });
        expect(
          (await h.error(SchedulerRpc.health, { ownerId: OTHER, endpointId: ep })).status,
        ).toBe(404);
        expect(
          (await h.error(SchedulerRpc.health, { ownerId: OWNER, endpointId: 'nope' })).status,
        ).toBe(404);
      });

      it("health's completed, failed and retried counts follow every kind of change and leave out expired jobs before the sweep", async () => {
        if (guard()) return;
        const db = h.server.app.get(PrismaClient, { strict: false });
        const { job } = h.server.app.get(SchedulerTables, { strict: false });
        const counts = h.server.app.get(JobCountsRepository, { strict: false });
        /** The counts over every alive job of the endpoint, counted afresh (what the triggers keep). */
        const recount = async (ep: string, now = new Date()) => {
          const [row] = await db.$queryRawUnsafe<Array<Record<string, number>>>(
            `SELECT count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed,
               count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
               count(*) FILTER (WHERE status = 'IN_PROGRESS')::int AS "inProgress",
               count(*) FILTER (WHERE status = 'IN_QUEUE')::int AS "inQueue",
               count(*) FILTER (WHERE retries > 0)::int AS retried
             FROM ${job} WHERE "endpointId" = $1 AND "deletedAt" IS NULL AND "expiresAt" > $2::timestamp(3)`,
            ep,
            now.toISOString(),
          );
          return row;
        };
        const steps: Array<[string, unknown, unknown]> = [];
        const check = async (step: string, ep: string) => {
          const [counted, expected] = [(await health(ep)).jobs, await recount(ep)];
          steps.push([step, counted, expected]);
        };
        const ep = await h.endpoint();
        const req = (jobId: string) => ({ ownerId: OWNER, endpointId: ep, jobId });
        const ids = [];
        for (let i = 0; i < 7; i++) ids.push(await h.submit(ep, { i }));
        await take(ep, 'w1', 4);
        await done(ep, 'w1', ids[0], { output: 1 });
        await done(ep, 'w1', ids[1], { error: 'x' });
        await check('a result and an error', ep);
        await h.call(SchedulerRpc.retryJob, req(ids[1]));
        await check('the failed job retried', ep);
        await h.call(SchedulerRpc.ping, {
          endpointId: ep,
          workerId: 'w1',
          jobIds: [],
          status: 'unhealthy',
        } as never);
        await check("an unhealthy worker's jobs requeued", ep);
        await h.call(SchedulerRpc.cancelJob, req(ids[4]));
        const again = await take(ep, 'w2', 2);
        await done(ep, 'w2', again[0].id, { error: 'y' });
        await done(ep, 'w2', again[1].id, { output: 2 });
        await check('a cancel, then requeued jobs finished', ep);
        await h.call(SchedulerRpc.purgeQueue, { ownerId: OWNER, endpointId: ep });
        await check('the queue purged', ep);
        for (const [step, counted, expected] of steps)
          expect({ step, counted }).toEqual({ step, counted: expected });
        await counts.fold(); // what the sweeper does: the counts stay the same
        await check('the changes folded', ep);
        for (const [step, counted, expected] of steps.slice(-1))
          expect({ step, counted }).toEqual({ step, counted: expected });
        const before = await recount(ep);
        expect(before.completed + before.failed + before.retried).toBeGreaterThan(2);
        // Past every job's expiry, before any sweep made them tombstones: none is counted.
        const later = new Date(Date.now() + 2 * 86_400_000);
        expect(await counts.forHealth(ep, later)).toEqual(await recount(ep, later));
        expect(await counts.forHealth(ep, later)).toEqual({
          completed: 0,
          failed: 0,
          inProgress: 0,
          inQueue: 0,
          retried: 0,
        });
      });

      it('counts folded in batches add up: 1,500 jobs finished by one statement', async () => {
        if (guard()) return;
        const db = h.server.app.get(PrismaClient, { strict: false });
        const { job, jobCount } = h.server.app.get(SchedulerTables, { strict: false });
        const counts = h.server.app.get(JobCountsRepository, { strict: false });
        const ep = await h.endpoint();
        await db.$executeRawUnsafe(
          `INSERT INTO ${job} (id, "endpointId", "ownerId", status, mode, input, "executionTimeoutMs", "ttlMs", "expiresAt", "completedAt")
           SELECT $1 || g, $2, $3, 'COMPLETED', 'run', '{}', 1000, 86400000, now() + interval '1 day', now()
           FROM generate_series(1, 1500) g`,
          `${ep}-bulk-`,
          ep,
          OWNER,
        );
        for (;;) {
          const folded = await counts.fold();
          expect(folded).toBeLessThanOrEqual(1000);
          if (folded < 1000) break;
        }
        expect((await health(ep)).jobs.completed).toBe(1500);
        // Every change folded into the endpoint's count (the sweeper may fold some of them too).
        await until(async () => {
          const [row] = await db.$queryRawUnsafe<Array<{ completed: number }>>(
            `SELECT completed FROM ${jobCount} WHERE "endpointId" = $1`,
            ep,
          );
          return row?.completed === 1500 || (await counts.fold(), false);
        });
      });

      it("a deleted endpoint's counts are forgotten once none of its jobs counts any more", async () => {
        if (guard()) return;
        const db = h.server.app.get(PrismaClient, { strict: false });
        const { job, jobCount } = h.server.app.get(SchedulerTables, { strict: false });
        const counts = h.server.app.get(JobCountsRepository, { strict: false });
        const kept = async (ep: string) =>
          db.$queryRawUnsafe<Array<{ completed: number }>>(
            `SELECT completed FROM ${jobCount} WHERE "endpointId" = $1`,
            ep,
          );
        const { ep, id } = await running();
        await done(ep, 'w-run', id, { output: 1 });
        await h.call(SchedulerRpc.deleteEndpoint, { ownerId: OWNER, endpointId: ep });
        await counts.fold();
        await counts.forgetGoneEndpoints();
        expect(await kept(ep)).toEqual([{ completed: 1 }]); // its finished job is still kept
        await db.$executeRawUnsafe(`UPDATE ${job} SET "deletedAt" = now() WHERE id = $1`, id);
        await counts.fold();
        await counts.forgetGoneEndpoints(); // (the sweeper may have done both already)
        expect(await kept(ep)).toEqual([]);
      });
    });
  });
}
