#!/usr/bin/env node
// Draining a deep queue: how fast workers empty an endpoint whose queue was filled before they
// started (a burst of /run calls, then the workers come up). bench/queue.mjs keeps its queue a
// few jobs deep; this one measures what a job's take costs when many wait behind it.
//
//   node bench/drain.mjs [--mode standalone|cluster|both] [--jobs 20000] [--workers 2]
//                        [--concurrency 8] [--clients 50]
//                        [--baseline <dir of another built checkout>] [--rounds N]
//
// Per mode: a fresh server (bench/lib/runplane.mjs), an endpoint without workers, `jobs` no-op
// jobs submitted with /run by `clients` callers, then the endpoint's workers raised to `workers`
// (each running bench/bench-worker.mjs with `concurrency`). Drain rate = jobs / (time from the
// first job taken to the last one completed), read from the endpoint's /health every 100 ms.
// Before the workers start, /health and the first /requests page are timed over the full queue
// (20 calls each, one after another): what a caller polling them costs while many jobs are
// retained; /health again once drained, over as many completed jobs kept with their results.
// Servers run with RUNPLANE_RATE_LIMITS=false. With --baseline every mode also runs against the
// other checkout and the table shows current/baseline ratios (--rounds N: N times, the checkouts
// taking turns going first, medians reported).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { now, round, sleep, summary } from './lib/measure.mjs';
import { createEndpoint } from './lib/runplane.mjs';
import { sideBySide, tableRows } from './lib/side-by-side.mjs';

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string', default: 'standalone' },
    jobs: { type: 'string', default: '20000' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    clients: { type: 'string', default: '50' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const config = {
  jobs: Number(opts.jobs),
  workers: Number(opts.workers),
  concurrency: Number(opts.concurrency),
  clients: Number(opts.clients),
};
const modes = opts.mode === 'both' ? ['standalone', 'cluster'] : [opts.mode];
const apiKey = `bench-${randomBytes(16).toString('hex')}`;
const api = apiClient(apiKey);

async function fill(queueApiBase, endpointId) {
  let next = 0;
  const started = now();
  const caller = async () => {
    while (next < config.jobs) {
      next += 1;
      await api.request(queueApiBase, 'POST', `/v2/${endpointId}/run`, { input: {} });
    }
  };
  await Promise.all(Array.from({ length: config.clients }, caller));
  return config.jobs / ((now() - started) / 1000);
}

/** Median of `calls` sequential GETs of the endpoint's `route`, in ms. */
async function getMs(queueApiBase, endpointId, route, calls = 20) {
  const times = [];
  for (let i = 0; i < calls; i++) {
    const t = now();
    await api.request(queueApiBase, 'GET', `/v2/${endpointId}/${route}`);
    times.push(now() - t);
  }
  return summary(times).p50;
}

async function drain(server, endpointId) {
  await api.request(server.base, 'PATCH', `/v1/endpoints/${endpointId}`, {
    workersMin: config.workers,
    workersMax: config.workers,
  });
  let firstTaken;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { jobs } = await api.request(server.queueApiBase, 'GET', `/v2/${endpointId}/health`);
    const t = now();
    if (firstTaken === undefined && jobs.inQueue < config.jobs) firstTaken = t;
    if (jobs.completed + jobs.failed >= config.jobs) {
      if (jobs.failed) throw new Error(`${jobs.failed} jobs failed`);
      return config.jobs / ((t - firstTaken) / 1000);
    }
    if (Date.now() > deadline) throw new Error(`not drained in 600 s: ${JSON.stringify(jobs)}`);
    await sleep(100);
  }
}

const run = { modes, baseline: opts.baseline, rounds: Number(opts.rounds), apiKey, tag: 'drain' };
const results = await sideBySide(run, async (server, label) => {
  const endpointId = await createEndpoint(api, server.base, { ...config, workers: 0 });
  process.stderr.write(`[drain] ${label}: queueing ${config.jobs} jobs\n`);
  const intake = await fill(server.queueApiBase, endpointId);
  const health = await getMs(server.queueApiBase, endpointId, 'health');
  const requests = await getMs(server.queueApiBase, endpointId, 'requests');
  process.stderr.write(`[drain] ${label}: draining with ${config.workers} workers\n`);
  const drainRate = await drain(server, endpointId);
  return {
    'run/s (filling)': round(intake),
    '/health p50 ms': round(health),
    '/requests p50 ms': round(requests),
    'drain jobs/s': round(drainRate),
    '/health p50 ms (drained)': round(await getMs(server.queueApiBase, endpointId, 'health')),
  };
});
api.close();
console.table(tableRows(results, run, (r) => r));
