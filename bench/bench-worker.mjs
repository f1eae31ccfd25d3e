#!/usr/bin/env node
// The worker the queue benchmark runs: a no-op handler written with @runplane/worker-sdk that
// reports when it started (the system-wide monotonic clock in ms, comparable across processes
// on one machine), so the benchmark can measure submit → handler start. A job whose input has
// `chunks: N` streams instead: N small items, each posted to job-stream (bench/queue.mjs --stream).
import { start } from '@runplane/worker-sdk';

function* tokens(n) {
  for (let i = 0; i < n; i++) yield { i, text: `token ${i}` };
}

const handler = (job) =>
  job.input?.chunks
    ? tokens(job.input.chunks)
    : { startedAt: Number(process.hrtime.bigint()) / 1e6 };

start({ handler, concurrency: Number(process.env.WORKER_CONCURRENCY) || 1 });
