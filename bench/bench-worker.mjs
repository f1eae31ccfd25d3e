#!/usr/bin/env node
// The worker the queue benchmark runs: a no-op handler written with @runplane/worker-sdk that
// reports when it started (the system-wide monotonic clock in ms, comparable across processes
// on one machine), so the benchmark can measure submit → handler start. A job whose input has
// `chunks: N` streams instead: N small items, each posted to job-stream (bench/queue.mjs --stream);
// one with `outputKb: N` also returns a completion of about N KiB (bench/queue.mjs --output-kb).
import { start } from '@runplane/worker-sdk';

const completions = new Map();
const completion = (kb) => {
  if (!completions.has(kb)) completions.set(kb, 'lorem ipsum '.repeat(Math.ceil((kb * 1024) / 12)));
  return completions.get(kb);
};

function* tokens(n) {
  for (let i = 0; i < n; i++) yield { i, text: `token ${i}` };
}

const handler = (job) => {
  if (job.input?.chunks) return tokens(job.input.chunks);
  const startedAt = Number(process.hrtime.bigint()) / 1e6;
  const kb = job.input?.outputKb;
  return kb ? { startedAt, choices: [{ message: { content: completion(kb) } }] } : { startedAt };
};

start({ handler, concurrency: Number(process.env.WORKER_CONCURRENCY) || 1 });
