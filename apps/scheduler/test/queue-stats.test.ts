import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRpc } from '@runplane/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { JobQueriesRepository } from '../src/store/job-queries.repository.js';
import { startHarness, type Harness } from './support.js';

/** The autoscaler's view of a queue: its head only, whatever its depth. */
describe('scheduler: queue statistics', () => {
  let h: Harness;
  let queries: JobQueriesRepository;
  let db: PrismaClient;

  beforeAll(async () => {
    h = await startHarness();
    queries = h.server.app.get(JobQueriesRepository, { strict: false });
    db = h.server.app.get(PrismaClient, { strict: false });
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
  });

  const submitMany = async (endpointId: string, n: number, extra = {}) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await h.submit(endpointId, { i }, extra));
    return ids;
  };
  const queuedAtOf = async (id: string) =>
    (await db.job.findUniqueOrThrow({ where: { id }, select: { queuedAt: true } })).queuedAt;

  it('counts queued normal-priority jobs up to the limit asked, running jobs all, per endpoint', async () => {
    const deep = await h.endpoint();
    const idle = await h.endpoint();
    const jobs = await submitMany(deep, 8);
    await submitMany(deep, 2, { policy: { lowPriority: true } });
    const taken = await h.call(SchedulerRpc.takeJobs, {
      endpointId: deep,
      workerId: 'w-1',
      batchSize: 3,
      waitMs: 0,
    });
    expect(taken.jobs.map((j) => j.id)).toEqual(jobs.slice(0, 3));

    const stats = await queries.queueStats([
      { endpointId: deep, countUpTo: 4 },
      { endpointId: idle, countUpTo: 4 },
    ]);
    expect(stats).toEqual([
      { endpointId: deep, queued: 4, running: 3, oldestQueuedAt: await queuedAtOf(jobs[3]) },
      { endpointId: idle, queued: 0, running: 0, oldestQueuedAt: null },
    ]);
    const [all] = await queries.queueStats([{ endpointId: deep, countUpTo: 100 }]);
    expect(all.queued).toBe(5); // the low-priority jobs never count
  });

  it('finds the oldest wait behind requeued jobs at the head of the queue', async () => {
    const ep = await h.endpoint();
    const jobs = await submitMany(ep, 5);
    // The two first jobs came back to the queue just now (a lost worker): they wait the least.
    await db.job.updateMany({
      where: { id: { in: jobs.slice(0, 2) } },
      data: { queuedAt: new Date(Date.now() + 60_000) },
    });
    const [stats] = await queries.queueStats([{ endpointId: ep, countUpTo: 3 }]);
    expect(stats).toMatchObject({ queued: 3, oldestQueuedAt: await queuedAtOf(jobs[2]) });
  });
});
