#!/usr/bin/env node
// A BullMQ worker process for the peer comparison: the same no-op handler as bench/bench-worker.mjs
// (returns when it started), `concurrency` jobs at once, as BullMQ's docs set a Worker up.
//   node bench/peers/bullmq-worker.mjs <queue name> <concurrency>
import { Worker } from 'bullmq';

const [name, concurrency] = process.argv.slice(2);
const worker = new Worker(
  name,
  async () => ({ startedAt: Number(process.hrtime.bigint()) / 1e6 }),
  {
    connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null },
    concurrency: Number(concurrency),
  },
);
worker.on('error', (err) => process.stderr.write(`bullmq worker: ${err.stack}\n`));
await worker.waitUntilReady();
process.send?.('ready');
process.on('SIGTERM', async () => {
  await worker.close();
  process.exit(0);
});
