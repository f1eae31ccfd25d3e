#!/usr/bin/env node
// The worker the queue benchmark runs: a no-op handler written with @runplane/worker-sdk that
// reports when it started (the system-wide monotonic clock in ms, comparable across processes
// on one machine), so the benchmark can measure submit → handler start.
import { start } from '@runplane/worker-sdk';

const handler = () => ({ startedAt: Number(process.hrtime.bigint()) / 1e6 });

start({ handler, concurrency: Number(process.env.WORKER_CONCURRENCY) || 1 });
