// The peers measured side by side with Runplane, each used the way its own docs show for "add a
// job and get its result", with the same no-op handler in `workers` separate worker processes of
// `concurrency` jobs each (as Runplane's managed workers). Each start function returns
// { submitAndWait, stop, settings } for the drivers in measure.mjs.
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import PgBoss from 'pg-boss';
import { now, sleep } from './measure.mjs';
import { REDIS } from './redis.mjs';
import { benchRoot } from './runplane.mjs';

async function startWorkers(script, args, count) {
  const children = [];
  for (let i = 0; i < count; i++) {
    const child = fork(path.join(benchRoot, 'bench/peers', script), args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) =>
        reject(new Error(`${script} exited (${code}) before it was ready`)),
      );
    });
  }
  return async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  };
}

/**
 * BullMQ (Redis): Queue.add, then job.waitUntilFinished(queueEvents) — the result arrives through
 * QueueEvents (a Redis stream every completion is written to). Jobs are kept after completion
 * (BullMQ's default), as Runplane keeps its job records; the queue is obliterated at the end.
 */
export async function startBullmq({ workers, concurrency }) {
  const name = `runplane-bench-${randomBytes(4).toString('hex')}`;
  const connection = { ...REDIS };
  const queue = new Queue(name, { connection });
  queue.setMaxListeners(0); // every job being awaited listens for the queue closing
  const events = new QueueEvents(name, { connection });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  const stopWorkers = await startWorkers('bullmq-worker.mjs', [name, String(concurrency)], workers);
  const submitAndWait = async (input) => {
    const submitted = now();
    const job = await queue.add('noop', input);
    const output = await job.waitUntilFinished(events, 60_000);
    return { submitted, observed: now(), startedAt: output.startedAt };
  };
  const stop = async () => {
    await stopWorkers();
    await queue.obliterate({ force: true });
    await Promise.all([events.close(), queue.close()]);
  };
  return {
    submitAndWait,
    stop,
    settings: { queue: name, workers, concurrency, removeOnComplete: false },
  };
}

/**
 * pg-boss 10 (PostgreSQL, its own throwaway database): send, then wait until the job is completed.
 * pg-boss 10 has no completion notification (getJobById reads one job), so one observer reads the
 * state of every job still awaited in one query every `observeMs` — pg-boss's docs allow reading
 * its job table directly — costing the database one small query per tick rather than one per job.
 */
export async function startPgBoss({ workers, concurrency, observeMs = 5 }) {
  const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';
  const database = `rp_bench_pgboss_${randomBytes(4).toString('hex')}`;
  execFileSync('psql', [`${pgBase}/postgres`, '-qc', `CREATE DATABASE ${database}`], {
    stdio: 'inherit',
  });
  const connectionString = `${pgBase}/${database}`;
  const name = 'runplane-bench';
  const boss = new PgBoss({ connectionString });
  boss.on('error', (err) => process.stderr.write(`pg-boss: ${err.stack ?? err.message}\n`));
  let stopWorkers = async () => {};
  const dropDatabase = () =>
    execFileSync(
      'psql',
      [`${pgBase}/postgres`, '-qc', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`],
      { stdio: 'inherit' },
    );
  try {
    await boss.start();
    await boss.createQueue(name);
    stopWorkers = await startWorkers(
      'pgboss-worker.mjs',
      [connectionString, name, String(concurrency)],
      workers,
    );
  } catch (err) {
    await boss.stop({ graceful: false }).catch(() => {});
    dropDatabase();
    throw err;
  }

  const db = boss.getDb();
  const awaited = new Map(); // job id → { resolve, reject }
  let observing = true;
  const observer = (async () => {
    while (observing) {
      if (awaited.size > 0) {
        try {
          const { rows } = await db.executeSql(
            `SELECT id, state, output FROM pgboss.job WHERE name = $1 AND id = ANY($2::uuid[]) AND state IN ('completed', 'failed', 'cancelled')`,
            [name, [...awaited.keys()]],
          );
          for (const row of rows) {
            const waiter = awaited.get(row.id);
            awaited.delete(row.id);
            if (row.state === 'completed') waiter.resolve(row.output);
            else
              waiter.reject(
                new Error(
                  `pg-boss job ${row.id} ended ${row.state}: ${JSON.stringify(row.output)}`,
                ),
              );
          }
        } catch (err) {
          for (const waiter of awaited.values()) waiter.reject(err);
          awaited.clear();
        }
      }
      await sleep(observeMs);
    }
  })();

  const submitAndWait = async (input) => {
    const submitted = now();
    const id = await boss.send(name, input);
    const output = await new Promise((resolve, reject) => awaited.set(id, { resolve, reject }));
    return { submitted, observed: now(), startedAt: output.startedAt };
  };
  const stop = async () => {
    observing = false;
    await observer;
    await stopWorkers();
    await boss.stop({ graceful: false, timeout: 5000 });
    await sleep(200);
    dropDatabase();
  };
  return {
    submitAndWait,
    stop,
    settings: {
      database,
      workers,
      concurrency,
      pollingIntervalSeconds: 0.5,
      batchSize: 1,
      observeMs,
    },
  };
}
