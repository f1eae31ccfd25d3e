import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { QueueApiSignals, SchedulerRpc } from '@runplane/contracts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SchedulerSettings } from '../src/settings.js';
import { EndpointsRepository } from '../src/store/endpoints.repository.js';
import { Sweeper } from '../src/timers/sweeper.service.js';
import { OWNER, sleep, startHarness, until, type Harness } from './support.js';

// Worker liveness: a scheduler's own downtime, or queue-api's, never counts as its workers'
// silence, and workers lost together are one failed start of their endpoint.

/** Takes one job for `workerId` without holding a long poll (only its pings then say it is alive). */
const takeOne = async (h: Harness, endpointId: string, workerId: string) =>
  (await h.call(SchedulerRpc.takeJobs, { endpointId, workerId, batchSize: 1, waitMs: 0 })).jobs.map(
    (j) => j.id,
  );

const statusOf = async (h: Harness, endpointId: string, jobId: string) =>
  (await h.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId, jobId })).status;

/**
 * Keeps the worker `w-alive` (holding job `alive`) pinging until job `silent`, held by a worker
 * that stays silent, is back in the queue.
 */
async function untilLostWhileOtherPings(
  h: Harness,
  endpointId: string,
  jobs: { alive: string; silent: string },
  what: string,
): Promise<void> {
  const ping = () =>
    h.call(SchedulerRpc.ping, { endpointId, workerId: 'w-alive', jobIds: [jobs.alive] });
  await ping();
  const pinging = setInterval(() => void ping().catch(() => {}), 300);
  try {
    await until(
      async () => (await statusOf(h, endpointId, jobs.silent)) === 'IN_QUEUE',
      20_000,
      what,
    );
  } finally {
    clearInterval(pinging);
  }
}

describe('worker liveness', () => {
  describe('on one scheduler', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness();
    });
    afterAll(() => h.stop());

    it("while queue-api relays nothing, workers' silence does not count; a worker silent after it is back is lost 3 ping intervals later", async () => {
      const intervalMs = h.server.app.get(SchedulerSettings, { strict: false }).pingIntervalMs;
      const ep = await h.endpoint();
      const alive = await h.submit(ep, { n: 1 });
      const silent = await h.submit(ep, { n: 2 });
      expect(await takeOne(h, ep, 'w-alive')).toEqual([alive]);
      expect(await takeOne(h, ep, 'w-silent')).toEqual([silent]);
      // queue-api down for 5 intervals: no worker call reaches the scheduler, nor its heartbeat.
      h.relaying = false;
      await sleep(5 * intervalMs);
      expect(await statusOf(h, ep, alive)).toBe('IN_PROGRESS');
      expect(await statusOf(h, ep, silent)).toBe('IN_PROGRESS');

      h.relaying = true;
      const back = Date.now();
      await untilLostWhileOtherPings(
        h,
        ep,
        { alive, silent },
        'the silent worker lost once queue-api is back',
      );
      expect(Date.now() - back).toBeGreaterThanOrEqual(3 * intervalMs - 100);
      expect(await statusOf(h, ep, alive)).toBe('IN_PROGRESS');
    }, 60_000);

    it('a held long poll counts as hearing its worker only while queue-api holds it: not once the worker left, nor once its replica went silent', async () => {
      const intervalMs = h.server.app.get(SchedulerSettings, { strict: false }).pingIntervalMs;
      const ep = await h.endpoint();
      const job = {
        left: await h.submit(ep),
        orphaned: await h.submit(ep),
        held: await h.submit(ep),
      };
      const taken = Date.now();
      expect(await takeOne(h, ep, 'w-left')).toEqual([job.left]);
      expect(await takeOne(h, ep, 'w-orphaned')).toEqual([job.orphaned]);
      expect(await takeOne(h, ep, 'w-held')).toEqual([job.held]);
      // Each then only holds a job-stop poll (no pings), as an idle pingless worker would.
      const holdStops = (workerId: string, relay: string, pollId: string, waitMs: number) =>
        h.call(
          SchedulerRpc.stopJobs,
          { endpointId: ep, workerId, relay, pollId, waitMs },
          waitMs + 5000,
        );
      // w-left's connection closed (queue-api reports it); w-orphaned's replica stops announcing
      // itself after relaying the poll (it died); w-held's poll stays held by a live replica.
      const left = holdStops('w-left', 'harness', 'harness/1', 60_000);
      const orphaned = holdStops('w-orphaned', 'qa-dead', 'qa-dead/1', 60_000);
      const held = holdStops('w-held', 'harness', 'harness/2', 8 * intervalMs);
      await h.server.bus.signal(QueueApiSignals.workerPollsEnded, {
        replica: 'harness',
        polls: ['harness/1'],
      });
      // Both polls end at their next round, long before their wait.
      expect(await left).toEqual({ jobsToStop: [] });
      expect(await orphaned).toEqual({ jobsToStop: [] });
      expect(Date.now() - taken).toBeLessThan(30_000);
      await until(
        async () =>
          (await statusOf(h, ep, job.left)) === 'IN_QUEUE' &&
          (await statusOf(h, ep, job.orphaned)) === 'IN_QUEUE',
        20_000,
        'both workers lost, their jobs requeued',
      );
      expect(Date.now() - taken).toBeGreaterThanOrEqual(3 * intervalMs - 100);
      // The worker whose poll is still held is alive for as long as the poll lasts.
      await sleep(taken + 5 * intervalMs - Date.now());
      expect(await statusOf(h, ep, job.held)).toBe('IN_PROGRESS');
      expect(await held).toEqual({ jobsToStop: [] });
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
  });

  it("a restarted scheduler does not count its own downtime as its workers' silence; a worker that stays silent is still lost 3 ping intervals after the restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-sched-restart-'));
    const intervalMs = 1000;
    const env = { RUNPLANE_DATA_DIR: dir, RUNPLANE_WORKER_PING_INTERVAL_MS: String(intervalMs) };
    try {
      const first = await startHarness(env);
      const ep = await first.endpoint();
      const alive = await first.submit(ep, { n: 1 });
      const dead = await first.submit(ep, { n: 2 });
      expect(await takeOne(first, ep, 'w-alive')).toEqual([alive]);
      expect(await takeOne(first, ep, 'w-dead')).toEqual([dead]);
      await first.stop();
      // Down for longer than 3 ping intervals: the workers' pings meanwhile were refused.
      await sleep(5 * intervalMs);

      const restarted = Date.now();
      const second = await startHarness(env);
      try {
        // A sweep before the live worker's next ping gets through, as after a real restart.
        await second.server.app.get(Sweeper, { strict: false }).tick();
        expect(await statusOf(second, ep, alive)).toBe('IN_PROGRESS');
        await untilLostWhileOtherPings(
          second,
          ep,
          { alive, silent: dead },
          'the silent worker lost after the restart',
        );
        expect(Date.now() - restarted).toBeGreaterThanOrEqual(3 * intervalMs - 100);
        expect(await statusOf(second, ep, alive)).toBe('IN_PROGRESS');
        expect(
          (await second.call(SchedulerRpc.health, { ownerId: OWNER, endpointId: ep })).workers,
        ).toMatchObject({ unhealthy: 1, running: 1 });
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
