import { describe, expect, it } from '@jest/globals';
import { SchedulerRpc, type RunplaneError } from '@runplane/contracts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OWNER, startHarness, until } from './support.js';

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
});
