import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRpc, type JobRecord, type RunplaneError } from '@runplane/contracts';
import { Sweeper } from '../src/timers/sweeper.service.js';
import { OWNER, sleep, startHarness, until, type Harness } from './support.js';

// The durable timers with the smallest policy values allowed (docs/limits.md) (executionTimeout 5 s, ttl
// 10 s) and a 1 s ping interval. The scenarios run concurrently (started in beforeAll, checked
// by the tests) so the file takes about as long as the longest one.
describe('durable timers', () => {
  let h: Harness;
  const scenarios = new Map<string, Promise<void>>();
  const keepAlive: NodeJS.Timeout[] = [];

  const status = (endpointId: string, jobId: string) =>
    h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId });
  const statusOrError = (endpointId: string, jobId: string): Promise<JobRecord | RunplaneError> =>
    status(endpointId, jobId).catch((e: RunplaneError) => e);
  /**
   * A timer must not fire early: after a sleep shorter than its delay the job is still `expected`
   * (404 counts as a change). Where the machine was so loaded that the sleep and the read overran
   * the delay, the change is allowed, and then only its not coming early is checked.
   */
  const notYet = async (
    endpointId: string,
    jobId: string,
    expected: string,
    since: number,
    delayMs: number,
  ) => {
    const now = await statusOrError(endpointId, jobId);
    const seen = typeof now.status === 'string' ? now.status : `HTTP ${now.status}`;
    if (seen !== expected) expect(Date.now() - since).toBeGreaterThanOrEqual(delayMs);
  };
  const take = async (endpointId: string, workerId: string) =>
    (
      await h.call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize: 1, waitMs: 0 })
    ).jobs.map((j) => j.id);
  const stops = (endpointId: string, workerId: string, waitMs: number) =>
    h
      .call(SchedulerRpc.stopJobs, { endpointId, workerId, waitMs }, waitMs + 10_000)
      .then((r) => r.jobsToStop);
  /** Pings like a healthy runpod-python worker holding `jobIds`. */
  const pinging = (endpointId: string, workerId: string, jobIds: string[]) => {
    const t = setInterval(() => {
      h.call(SchedulerRpc.ping, { endpointId, workerId, jobIds }).catch(() => {});
    }, 300);
    keepAlive.push(t);
    return () => clearInterval(t);
  };
  const scenario = (name: string, run: () => Promise<void>) => {
    const p = run();
    p.catch(() => {}); // reported by the test that awaits it
    scenarios.set(name, p);
  };

  beforeAll(async () => {
    h = await startHarness();

    scenario('policy timeout', async () => {
      const ep = await h.endpoint();
      const id = await h.submit(ep, { n: 1 }, { policy: { executionTimeout: 5000 } });
      const takenAt = Date.now(); // no later than the server's startedAt
      expect(await take(ep, 'w-timeout')).toEqual([id]);
      const quiet = pinging(ep, 'w-timeout', [id]);
      const stop = stops(ep, 'w-timeout', 30_000);
      await sleep(3000);
      await notYet(ep, id, 'IN_PROGRESS', takenAt, 4900);
      expect(await stop).toEqual([id]); // the worker is told to stop...
      quiet();
      expect(Date.now() - takenAt).toBeGreaterThanOrEqual(4900); // ...once the 5 s have passed
      const rec = await status(ep, id);
      expect(rec).toMatchObject({ status: 'TIMED_OUT', workerId: 'w-timeout' });
      expect(rec.executionTime).toBeGreaterThanOrEqual(5000);
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w-timeout',
        jobId: id,
        body: { output: 'late' },
        isStream: false,
      });
      expect((await status(ep, id)).status).toBe('TIMED_OUT');
      expect(
        await h.call(SchedulerRpc.retryJob, { ownerId: OWNER, endpointId: ep, jobId: id }),
      ).toEqual({ id, status: 'IN_QUEUE' });
    });

    scenario('endpoint timeout, overridden by policy', async () => {
      const ep = await h.endpoint({ executionTimeoutMs: 5000 });
      const short = await h.submit(ep, { n: 1 });
      const long = await h.submit(ep, { n: 2 }, { policy: { executionTimeout: 30_000 } });
      expect(await take(ep, 'w-ep-1')).toEqual([short]);
      expect(await take(ep, 'w-ep-2')).toEqual([long]);
      const quiet = [pinging(ep, 'w-ep-1', [short]), pinging(ep, 'w-ep-2', [long])];
      await until(
        async () => (await status(ep, short)).status === 'TIMED_OUT',
        15_000,
        'endpoint executionTimeoutMs',
      );
      expect((await status(ep, long)).status).toBe('IN_PROGRESS');
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w-ep-2',
        jobId: long,
        body: { output: 'in time' },
        isStream: false,
      });
      expect(await status(ep, long)).toMatchObject({ status: 'COMPLETED', output: 'in time' });
      quiet.forEach((q) => q());
    });

    scenario('ttl of a running job', async () => {
      const ep = await h.endpoint();
      const submitted = Date.now(); // no later than the server's createdAt
      const id = await h.submit(
        ep,
        { n: 1 },
        { policy: { ttl: 10_000, executionTimeout: 60_000 } },
      );
      expect(await take(ep, 'w-ttl')).toEqual([id]);
      const quiet = pinging(ep, 'w-ttl', [id]);
      const stop = stops(ep, 'w-ttl', 30_000);
      await sleep(7000);
      await notYet(ep, id, 'IN_PROGRESS', submitted, 9900);
      expect(await stop).toEqual([id]);
      quiet();
      expect(Date.now() - submitted).toBeGreaterThanOrEqual(9900);
      const gone = await statusOrError(ep, id);
      expect((gone as RunplaneError).status).toBe(404);
      // its late result is acknowledged and dropped; the job stays deleted
      expect(
        await h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: 'w-ttl',
          jobId: id,
          body: { output: 'late' },
          isStream: false,
        }),
      ).toEqual({ ok: true });
      expect(((await statusOrError(ep, id)) as RunplaneError).status).toBe(404);
      expect(
        (await h.call(SchedulerRpc.health, { ownerId: OWNER, endpointId: ep })).jobs.inProgress,
      ).toBe(0);
    });

    scenario('ttl of queued jobs, also set through /status?ttl=', async () => {
      const ep = await h.endpoint();
      const submitted = Date.now();
      const viaPolicy = await h.submit(ep, { n: 1 }, { policy: { ttl: 10_000 } });
      const viaStatus = await h.submit(ep, { n: 2 });
      await h.call(SchedulerRpc.getJob, {
        ownerId: OWNER,
        endpointId: ep,
        jobId: viaStatus,
        ttlMs: 10_000,
      });
      await sleep(7000);
      await notYet(ep, viaPolicy, 'IN_QUEUE', submitted, 9900);
      for (const id of [viaPolicy, viaStatus]) {
        await until(
          async () => ((await statusOrError(ep, id)) as RunplaneError).status === 404,
          10_000,
          `ttl of ${id}`,
        );
      }
      expect(Date.now() - submitted).toBeGreaterThanOrEqual(9900);
      expect(await take(ep, 'w-late')).toEqual([]);
    });

    scenario('ping loss', async () => {
      const ep = await h.endpoint();
      const id = await h.submit(ep, { n: 1 });
      expect(await take(ep, 'w-silent')).toEqual([id]);
      // Another worker is heard meanwhile: silence counts against the others' calls.
      const healthy = pinging(ep, 'w-healthy', []);
      await h.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w-silent', jobIds: [id] });
      const lastPing = Date.now();
      await sleep(1500);
      await notYet(ep, id, 'IN_PROGRESS', lastPing, 2500); // one missed ping is not enough
      await until(
        async () => (await status(ep, id)).status === 'IN_QUEUE',
        10_000,
        'requeue after 3 missed pings',
      );
      expect(Date.now() - lastPing).toBeGreaterThanOrEqual(2500); // 3 intervals of 1 s after the last sign of life
      expect(await status(ep, id)).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
      expect(
        (await h.call(SchedulerRpc.health, { ownerId: OWNER, endpointId: ep })).workers,
      ).toMatchObject({ unhealthy: 1, running: 0 });
      healthy();
      expect(await take(ep, 'w-healthy')).toEqual([id]);
      // should the silent worker come back, it learns that the job is not its own any more
      expect(await stops(ep, 'w-silent', 0)).toEqual([id]);
      await h.call(SchedulerRpc.jobDone, {
        endpointId: ep,
        workerId: 'w-healthy',
        jobId: id,
        body: { output: 'rescued' },
        isStream: false,
      });
      expect(await status(ep, id)).toMatchObject({
        status: 'COMPLETED',
        output: 'rescued',
        retries: 1,
        workerId: 'w-healthy',
      });
    });

    scenario('a job given to a worker that never received it', async () => {
      const ep = await h.endpoint();
      const [lost, kept] = [await h.submit(ep, { n: 1 }), await h.submit(ep, { n: 2 })];
      // Both are assigned to the worker; the answer carrying `lost` is lost on its way.
      const takenAt = Date.now();
      expect(
        (
          await h.call(SchedulerRpc.takeJobs, {
            endpointId: ep,
            workerId: 'w-rec',
            batchSize: 2,
            waitMs: 0,
          })
        ).jobs
          .map((j) => j.id)
          .sort(),
      ).toEqual([lost, kept].sort());
      const ping = (jobIds: string[], reportsJobs = true) =>
        h.call(SchedulerRpc.ping, {
          endpointId: ep,
          workerId: 'w-rec',
          jobIds,
          ...(reportsJobs ? { reportsJobs } : {}),
        });
      // Alive throughout (pings that do not list their jobs), so that only reconciliation moves a job.
      const quiet = pinging(ep, 'w-rec', [kept]);
      await ping([kept]);
      // Within two intervals of the assignment it may still be on its way (checked unless the
      // machine was so loaded that the ping itself took that long).
      const early = Date.now() - takenAt < 1500;
      if (early) expect((await status(ep, lost)).status).toBe('IN_PROGRESS');
      await sleep(2200);
      if (early) {
        await ping([kept], false); // a ping that does not list its jobs proves nothing
        expect((await status(ep, lost)).status).toBe('IN_PROGRESS');
      }
      await ping([kept]);
      expect(await status(ep, lost)).toEqual({ id: lost, status: 'IN_QUEUE', retries: 1 });
      expect(await status(ep, kept)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w-rec' });
      expect(await take(ep, 'w-other')).toEqual([lost]);
      expect(await stops(ep, 'w-rec', 0)).toEqual([lost]); // should it have it after all
      quiet();
    });
  }, 90_000);

  afterAll(async () => {
    keepAlive.forEach(clearInterval);
    await Promise.allSettled(scenarios.values());
    await h?.stop();
  }, 60_000);

  const check = (name: string) => it(name, () => scenarios.get(name)!, 60_000);
  check('policy timeout');
  check('endpoint timeout, overridden by policy');
  check('ttl of a running job');
  check('ttl of queued jobs, also set through /status?ttl=');
  check('ping loss');
  check('a job given to a worker that never received it');

  describe('result retention (30 min after /run, 1 min after /runsync), by sweeping at a later time', () => {
    it('removes output and error; the job stays readable; retry is refused', async () => {
      const sweeper = h.server.app.get(Sweeper, { strict: false });
      const ep = await h.endpoint();
      const run = await h.submit(ep, { n: 1 });
      const sync = await h.submit(ep, { n: 2 }, {}, 'runsync');
      const failed = await h.submit(ep, { n: 3 });
      const jobs = (
        await h.call(SchedulerRpc.takeJobs, {
          endpointId: ep,
          workerId: 'w-keep',
          batchSize: 3,
          waitMs: 0,
        })
      ).jobs.map((j) => j.id);
      expect(jobs).toEqual([run, sync, failed]);
      const done = (jobId: string, body: Record<string, unknown>) =>
        h.call(SchedulerRpc.jobDone, {
          endpointId: ep,
          workerId: 'w-keep',
          jobId,
          body,
          isStream: false,
        });
      await done(run, { output: 'kept 30 min' });
      await done(sync, { output: 'kept 1 min' });
      await done(failed, { error: 'kept 30 min' });
      const now = Date.now();

      await sweeper.tick(new Date(now + 61_000));
      expect(await status(ep, sync)).toEqual({
        id: sync,
        status: 'COMPLETED',
        delayTime: expect.any(Number),
        executionTime: expect.any(Number),
        retries: 0,
        workerId: 'w-keep',
      });
      expect((await status(ep, run)).output).toBe('kept 30 min');

      await sweeper.tick(new Date(now + 29 * 60_000));
      expect((await status(ep, failed)).error).toBe('kept 30 min');
      await sweeper.tick(new Date(now + 31 * 60_000));
      const expired = await status(ep, run);
      expect(expired.status).toBe('COMPLETED');
      expect(expired.output).toBeUndefined();
      const err = await h.error(SchedulerRpc.retryJob, {
        ownerId: OWNER,
        endpointId: ep,
        jobId: failed,
      });
      expect([err.status, err.code]).toEqual([409, 'JOB_RESULTS_EXPIRED']);
      expect((await status(ep, failed)).error).toBeUndefined();
    });
  });
});
