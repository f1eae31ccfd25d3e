import { describe, expect, it } from '@jest/globals';
import { SchedulerRpc, type RunplaneError } from '@runplane/contracts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sweeper } from '../src/timers/sweeper.service.js';
import { OWNER, sleep, startHarness, until } from './support.js';

describe('restart', () => {
  it('held long polls answer at shutdown; timers are database state: a timeout and a ttl that fall due while the server is down still happen', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-sched-restart-'));
    // A long ping interval: nobody pings while the server is down.
    const env = { RUNPLANE_DATA_DIR: dir, RUNPLANE_WORKER_PING_INTERVAL_MS: '600000' };
    try {
      const first = await startHarness(env);
      const ep = await first.endpoint();
      const running = await first.submit(ep, { n: 1 }, { policy: { executionTimeout: 5000 } });
      const queued = await first.submit(ep, { n: 2 }, { policy: { ttl: 10_000 } });
      const taken = await first.call(SchedulerRpc.takeJobs, {
        endpointId: ep,
        workerId: 'w-r',
        batchSize: 1,
        waitMs: 0,
      });
      expect(taken.jobs.map((j) => j.id)).toEqual([running]);
      // Long polls held at shutdown answer at once instead of holding it up.
      const empty = await first.endpoint();
      const take = first.call(
        SchedulerRpc.takeJobs,
        { endpointId: empty, workerId: 'w-idle', batchSize: 1, waitMs: 20_000 },
        30_000,
      );
      const awaiting = first.call(
        SchedulerRpc.awaitJob,
        { ownerId: OWNER, endpointId: ep, jobId: queued, waitMs: 20_000 },
        30_000,
      );
      await new Promise((r) => setTimeout(r, 300));
      const stopping = Date.now();
      await first.stop();
      expect((await take).jobs).toEqual([]);
      expect((await awaiting).status).toBe('IN_QUEUE');
      expect(Date.now() - stopping).toBeLessThan(10_000);

      const second = await startHarness(env);
      try {
        const get = (jobId: string) =>
          second.call(SchedulerRpc.getJob, { ownerId: OWNER, endpointId: ep, jobId });
        await until(
          async () => (await get(running)).status === 'TIMED_OUT',
          20_000,
          'timeout after the restart',
        );
        await until(
          () =>
            get(queued).then(
              () => false,
              (e: RunplaneError) => e.status === 404,
            ),
          20_000,
          'ttl after the restart',
        );
        expect(
          (await second.call(SchedulerRpc.stopJobs, { endpointId: ep, workerId: 'w-r', waitMs: 0 }))
            .jobsToStop,
        ).toEqual([running]);
      } finally {
        await second.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("a restarted scheduler does not count its own downtime as its workers' silence; a worker that stays silent is still lost 3 ping intervals after the restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-sched-restart-'));
    const env = { RUNPLANE_DATA_DIR: dir, RUNPLANE_WORKER_PING_INTERVAL_MS: '1000' };
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
      // Down for longer than 3 ping intervals: the workers' pings meanwhile were refused.
      await sleep(3500);

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
          expect(Date.now() - restarted).toBeGreaterThanOrEqual(2900);
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
