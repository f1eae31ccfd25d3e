#!/usr/bin/env node
// A Runplane (RunPod-compatible) serverless worker written with @runplane/worker-sdk.
// Runs with plain `node` (no build step). Job input:
//   {"echo": X}         output X
//   {"sleep_ms": n}     waits n ms first (stops early if the job is cancelled)
//   {"stream": n}       streams n chunks {"i": k} ("interval_ms" apart, default 100), output []
//   {"progress": true}  reports progress before finishing (with sleep_ms: at its start and middle)
//   {"fail": "msg"}     the job fails with error "msg" (after sleep_ms, if given)
// Without RUNPOD_WEBHOOK_GET_JOB it runs one local test job:
//   node worker.mjs --test_input '{"input": {"echo": "hi"}}'
import { start } from '@runplane/worker-sdk';
import { setTimeout as sleep } from 'node:timers/promises';

/** Waits ms, or less if the job is stopped (returns false then). */
async function pause(ms, signal) {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

async function* streamChunks(n, intervalMs, signal) {
  for (let i = 0; i < n; i++) {
    if (i > 0 && !(await pause(intervalMs, signal))) return;
    yield { i };
  }
}

async function handler(job, { signal, progress, log }) {
  const input = job.input ?? {};
  if (Number.isInteger(input.sleep_ms) && input.sleep_ms > 0) {
    if (input.progress) await progress({ stage: 'sleeping', ms: input.sleep_ms });
    const half = Math.floor(input.sleep_ms / 2);
    if (!(await pause(half, signal))) return; // stopped: nothing is posted anyway
    if (input.progress) await progress({ stage: 'half-way' });
    if (!(await pause(input.sleep_ms - half, signal))) return;
  }
  if (typeof input.fail === 'string') return { error: input.fail };
  if (Number.isInteger(input.stream)) {
    log.info(`streaming ${input.stream} chunks`);
    return streamChunks(
      input.stream,
      Number.isInteger(input.interval_ms) ? input.interval_ms : 100,
      signal,
    );
  }
  return 'echo' in input ? input.echo : 'ok';
}

start({ handler, concurrency: Number(process.env.WORKER_CONCURRENCY) || 1 });
