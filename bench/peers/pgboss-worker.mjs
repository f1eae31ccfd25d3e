#!/usr/bin/env node
// A pg-boss 10 worker process for the peer comparison: the same no-op handler as
// bench/bench-worker.mjs (returns when it started). pg-boss 10 has no concurrency option: each
// work() call is one polling loop, so `concurrency` calls give that many jobs at once; loops poll
// at pg-boss's shortest allowed interval (0.5 s) and fetch one job each (batchSize 1, its default).
//   node bench/peers/pgboss-worker.mjs <connection string> <queue name> <concurrency>
import PgBoss from 'pg-boss';

const [connectionString, name, concurrency] = process.argv.slice(2);
const boss = new PgBoss({ connectionString });
boss.on('error', (err) => process.stderr.write(`pg-boss worker: ${err.stack ?? err.message}\n`));
await boss.start();
for (let i = 0; i < Number(concurrency); i++) {
  await boss.work(name, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async () => ({
    startedAt: Number(process.hrtime.bigint()) / 1e6,
  }));
}
process.send?.('ready');
process.on('SIGTERM', async () => {
  await boss.stop({ graceful: true, timeout: 5000 });
  process.exit(0);
});
