import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRpc } from '@runplane/contracts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SchedulerSettings } from '../src/settings.js';
import { EndpointsRepository } from '../src/store/endpoints.repository.js';
import { Sweeper } from '../src/timers/sweeper.service.js';
import { OWNER, sleep, startHarness, until, type Harness } from './support.js';

// Worker liveness (1 s ping interval): a worker is lost when it misses 3 intervals while other
// workers are heard, or 10 when nobody is (the path from the workers down, or the scheduler too
// busy to record their pings); a scheduler's own downtime never counts.
describe('worker liveness', () => {
  describe('on one scheduler', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness();
    });
    afterAll(() => h.stop());

    const takeOne = async (endpointId: string, workerId: string) =>
      (
        await h.call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize: 1, waitMs: 0 })
      ).jobs.map((j) => j.id);
    const statusOf = async (endpointId: string, jobId: string) =>
      (await h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId })).status;
    /** A new endpoint whose workers (external ones, known by this call) each took one job. */
    const eachTookAJob = async (workers: string[]) => {
      const ep = await h.endpoint();
      const jobs: string[] = [];
      for (const [n, workerId] of workers.entries()) {
        const id = await h.submit(ep, { n });
        expect(await takeOne(ep, workerId)).toEqual([id]);
        jobs.push(id);
      }
      return { ep, jobs };
    };

    it('while nobody is heard, no worker is lost after 3 intervals; a silent worker is lost after 10', async () => {
      const {
        ep,
        jobs: [first, second],
      } = await eachTookAJob(['w-quiet-1', 'w-quiet-2']);
      const lastCall = Date.now();
      // Nobody calls: as when queue-api or the bus is down. 4 intervals pass.
      await sleep(4000);
      expect(await statusOf(ep, first)).toBe('IN_PROGRESS');
      expect(await statusOf(ep, second)).toBe('IN_PROGRESS');
      await until(
        async () =>
          (await statusOf(ep, first)) === 'IN_QUEUE' && (await statusOf(ep, second)) === 'IN_QUEUE',
        20_000,
        'both lost once nobody was heard for 10 intervals',
      );
      expect(Date.now() - lastCall).toBeGreaterThanOrEqual(9900);
    }, 60_000);

    it("workers that fail together step their endpoint's start back-off once", async () => {
      const ep = await h.endpoint();
      const endpoints = h.server.app.get(EndpointsRepository, { strict: false });
      const { startBackoff } = h.server.app.get(SchedulerSettings, { strict: false });
      const backoff = async () => {
        const row = (await endpoints.find(ep))!;
        return { failures: row.startFailures, until: row.startBackoffUntil?.getTime() };
      };
      const now = new Date();
      // Eight workers lost in one sweep (their node died): one failed start, not eight.
      for (let i = 0; i < 8; i++) await endpoints.recordStartFailure(ep, startBackoff, now);
      expect(await backoff()).toEqual({ failures: 1, until: now.getTime() + startBackoff(1) });
      // Another failure during the back-off is still the same one.
      const during = new Date(now.getTime() + startBackoff(1) - 1);
      await endpoints.recordStartFailure(ep, startBackoff, during);
      expect((await backoff()).failures).toBe(1);
      // Once the back-off is over, the next failure (the restarted workers dying) is a step more.
      const after = new Date(now.getTime() + startBackoff(1));
      await endpoints.recordStartFailure(ep, startBackoff, after);
      expect(await backoff()).toEqual({ failures: 2, until: after.getTime() + startBackoff(2) });
    });

    it('a worker silent while another is heard is lost after 3 intervals', async () => {
      const {
        ep,
        jobs: [silentJob, heardJob],
      } = await eachTookAJob(['w-silent', 'w-heard']);
      const lastCall = Date.now();
      const ping = () =>
        h.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w-heard', jobIds: [heardJob] });
      const pinging = setInterval(() => void ping().catch(() => {}), 300);
      try {
        await until(
          async () => (await statusOf(ep, silentJob)) === 'IN_QUEUE',
          20_000,
          'the silent worker lost',
        );
        const after = Date.now() - lastCall;
        expect(after).toBeGreaterThanOrEqual(2900);
        // By the others' pings, well before the 10 intervals of a worker nobody else was heard beside.
        expect(after).toBeLessThan(9000);
        expect(await statusOf(ep, heardJob)).toBe('IN_PROGRESS');
      } finally {
        clearInterval(pinging);
      }
    }, 60_000);
  });

  it("a restarted scheduler does not count its own downtime as its workers' silence; a worker that stays silent is still lost 3 ping intervals after the restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-sched-restart-'));
    const intervalMs = 500;
    const env = { RUNPLANE_DATA_DIR: dir, RUNPLANE_WORKER_PING_INTERVAL_MS: String(intervalMs) };
    try {
      const first = await startHarness(env);
      const ep = await first.endpoint();
      const alive = await first.submit(ep, { n: 1 });
      const dead = await first.submit(ep, { n: 2 });
      const take = (workerId: string) =>
        first.call(SchedulerRpc.takeJobs, { endpointId: ep, workerId, batchSize: 1, waitMs: 0 });
      expect((await take('w-alive')).jobs.map((j) => j.id)).toEqual([alive]);
      expect((await take('w-dead')).jobs.map((j) => j.id)).toEqual([dead]);
      await first.stop();
      // Down for longer than 10 ping intervals (the silence that counts even when nobody else is
      // heard): the workers' pings meanwhile were refused.
      await sleep(11 * intervalMs);

      const restarted = Date.now();
      const second = await startHarness(env);
      try {
        // A sweep before the live worker's next ping gets through, as after a real restart.
        await second.server.app.get(Sweeper, { strict: false }).tick();
        const get = (jobId: string) =>
          second.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: ep, jobId });
        expect((await get(alive)).status).toBe('IN_PROGRESS');
        const ping = () =>
          second.call(SchedulerRpc.ping, { endpointId: ep, workerId: 'w-alive', jobIds: [alive] });
        await ping();
        const pinging = setInterval(() => void ping().catch(() => {}), 300);
        try {
          await until(
            async () => (await get(dead)).status === 'IN_QUEUE',
            20_000,
            'the silent worker lost after the restart',
          );
          expect(Date.now() - restarted).toBeGreaterThanOrEqual(3 * intervalMs - 100);
          expect((await get(alive)).status).toBe('IN_PROGRESS');
          expect(
            (await second.call(SchedulerRpc.health, { ownerId: OWNER, endpointId: ep })).workers,
          ).toMatchObject({ unhealthy: 1, running: 1 });
        } finally {
          clearInterval(pinging);
        }
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
