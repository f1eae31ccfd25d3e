import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRpc } from '@runplane/contracts';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { JobQueriesRepository } from '../src/store/job-queries.repository.js';
import { SchedulerTables } from '../src/store/scheduler-tables.js';
import { OWNER, startHarness, type Harness } from './support.js';

/**
 * The autoscaler's view of a queue, a worker's take and a /requests page: each reads the head of
 * the queue (or of each status) only, whatever its depth.
 */
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
  /** A worker's take of up to `batchSize` jobs; the ids taken. */
  const take = async (endpointId: string, batchSize: number) =>
    (
      await h.call(SchedulerRpc.takeJobs, { endpointId, workerId: 'w-1', batchSize, waitMs: 0 })
    ).jobs.map((j) => j.id);
  const queuedAtOf = async (id: string) =>
    (await db.job.findUniqueOrThrow({ where: { id }, select: { queuedAt: true } })).queuedAt;

  // Rows of the job table read through its indexes and by sequential scans, as PostgreSQL's
  // statistics count them (flushed on demand: the embedded database has no stats collector).
  const rowsRead = async () => {
    const job = h.server.app.get(SchedulerTables, { strict: false }).job;
    await db.$executeRawUnsafe('SELECT pg_stat_force_next_flush()');
    const [r] = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT ((SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relid = $1::regclass)
        + (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relid = $1::regclass))::int AS n`,
      job,
    );
    return r.n;
  };

  it('counts queued normal-priority jobs up to the limit asked, running jobs all, per endpoint', async () => {
    const deep = await h.endpoint();
    const idle = await h.endpoint();
    const jobs = await submitMany(deep, 8);
    await submitMany(deep, 2, { policy: { lowPriority: true } });
    expect(await take(deep, 3)).toEqual(jobs.slice(0, 3));

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

  it('takes from the head of a deep queue without reading the rest of it', async () => {
    const ep = await h.endpoint();
    const jobs = await submitMany(ep, 60);
    const before = await rowsRead();
    expect(await take(ep, 2)).toEqual(jobs.slice(0, 2));
    // The two jobs taken, found again by id to be updated; sorting the whole queue read all 60.
    expect((await rowsRead()) - before).toBeLessThan(10);
  });

  it('reads a /requests page from the head of each status, not every job of the endpoint', async () => {
    const ep = await h.endpoint();
    const jobs = await submitMany(ep, 58);
    for (let i = 0; i < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5)); // the newest two apart in time
      jobs.push(...(await submitMany(ep, 1)));
    }
    await take(ep, 10);
    const before = await rowsRead();
    const page = await h.call(SchedulerRpc.listJobs, {
      ownerId: OWNER,
      endpointId: ep,
      limit: 2,
    } as never);
    expect(page.requests.map((r) => r.id)).toEqual([jobs[59], jobs[58]]);
    // A page and one more row from each status that has jobs; sorting them all read all 60.
    expect((await rowsRead()) - before).toBeLessThan(12);
  });
});
