#!/usr/bin/env node
// Runplane alone, and optionally side by side with another checkout: no-op job throughput and
// dispatch latency in standalone and cluster mode. (The whole suite with the peers and /run intake
// is bench/run.mjs, `npm run bench`; both share bench/lib/.)
//
//   node bench/queue.mjs [--mode standalone|cluster|both] [--jobs 2000] [--latency-jobs 500]
//                        [--workers 2] [--concurrency 8] [--clients 32] [--profile-dir <dir>]
//                        [--webhook] [--stream <chunks per job>] [--input-kb <KiB>]
//                        [--output-kb <KiB>]
//                        [--baseline <dir of another built checkout>] [--rounds N]
//
// Per mode it starts a fresh server (bench/lib/runplane.mjs), creates an endpoint whose managed
// workers run bench/bench-worker.mjs, and measures through the public HTTP API only (one /runsync
// per job): dispatch latency (submit → handler start, submit → result) one job at a time with idle
// workers, then throughput with --clients callers. Servers run with RUNPLANE_RATE_LIMITS=false (see
// bench/run.mjs). With --webhook every job carries a webhook to a receiver in this process that
// answers 200 at once; the run then also waits until every webhook has arrived. With --stream N
// every job streams N small items (each one a job-stream post) instead of returning at once:
// throughput only (the handler's start is not reported), as jobs/s and chunks/s. With --input-kb N
// every job's input is a chat-completion-like request of about N KiB (bench/lib/measure.mjs), with
// --output-kb N every job's result carries a completion of about N KiB. With --baseline
// every mode also runs against the other checkout and the table shows current/baseline ratios;
// --rounds N repeats that N times, the checkouts taking turns going first, and reports medians.
// Prints a table and writes JSON to bench/results/.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { machine, versions } from './lib/machine.mjs';
import { chatInput, latency, round, sleep, throughput, withInput } from './lib/measure.mjs';
import { benchRoot, createEndpoint, runsyncSubmitter } from './lib/runplane.mjs';
import { sideBySide, tableRows } from './lib/side-by-side.mjs';

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    jobs: { type: 'string', default: '2000' },
    'latency-jobs': { type: 'string', default: '500' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    clients: { type: 'string', default: '32' },
    // e.g. --profile-dir /tmp/prof: CPU profiles of the server's processes (bench/profile-summary.mjs)
    'profile-dir': { type: 'string' },
    webhook: { type: 'boolean', default: false },
    stream: { type: 'string' },
    'input-kb': { type: 'string' },
    'output-kb': { type: 'string' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const config = {
  jobs: Number(opts.jobs),
  latencyJobs: Number(opts['latency-jobs']),
  workers: Number(opts.workers),
  concurrency: Number(opts.concurrency),
  clients: Number(opts.clients),
  webhook: opts.webhook,
  streamChunks: opts.stream ? Number(opts.stream) : undefined,
  inputKb: opts['input-kb'] ? Number(opts['input-kb']) : undefined,
  outputKb: opts['output-kb'] ? Number(opts['output-kb']) : undefined,
};
let webhooksReceived = 0;
const receiver = opts.webhook
  ? http
      .createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          webhooksReceived += 1;
          res.end();
        });
      })
      .listen(0, '127.0.0.1')
  : undefined;
const jobFields = receiver
  ? await new Promise((resolve) =>
      receiver.once('listening', () =>
        resolve({ webhook: `http://127.0.0.1:${receiver.address().port}/hook` }),
      ),
    )
  : {};
const modes = opts.mode === 'both' ? ['standalone', 'cluster'] : [opts.mode];
const apiKey = `bench-${randomBytes(16).toString('hex')}`;
const api = apiClient(apiKey);
const results = {
  date: new Date().toISOString(),
  machine: machine(),
  versions: await versions(),
  config,
  modes: {},
};

const run = {
  modes,
  baseline: opts.baseline,
  rounds: Number(opts.rounds),
  apiKey,
  tag: 'bench',
  profileDir: opts['profile-dir'],
};
results.modes = await sideBySide(run, async (server, label) => {
  const submitJob = runsyncSubmitter(
    api,
    server.queueApiBase,
    await createEndpoint(api, server.base, config),
    jobFields,
  );
  const submit = withInput(submitJob, {
    ...(config.streamChunks ? { chunks: config.streamChunks } : {}),
    ...(config.inputKb ? chatInput(config.inputKb) : {}),
    ...(config.outputKb ? { outputKb: config.outputKb } : {}),
  });
  const webhooksBefore = webhooksReceived;
  server.startProfiling(); // with --profile-dir: latency and throughput, not start-up
  process.stderr.write(`[bench] ${label}: latency (${config.latencyJobs} sequential jobs)\n`);
  const lat = await latency(submit, { jobs: config.latencyJobs });
  process.stderr.write(
    `[bench] ${label}: throughput (${config.jobs} jobs, ${config.clients} callers)\n`,
  );
  const measured = { ...lat, throughput: await throughput(submit, config) };
  if (receiver) {
    const expected = webhooksBefore + config.latencyJobs + 50 + config.jobs; // 50: warm-up
    const deadline = Date.now() + 120_000;
    while (webhooksReceived < expected && Date.now() < deadline) await sleep(100);
    if (webhooksReceived < expected)
      throw new Error(`${expected - webhooksReceived} webhooks did not arrive in 120 s`);
  }
  return measured;
});
api.close();
receiver?.close();

const cells = (r) => ({
  'jobs/s': r.throughput.jobsPerSecond,
  ...(config.streamChunks
    ? { 'chunks/s': round(r.throughput.jobsPerSecond * config.streamChunks) }
    : {}),
  'dispatch p50 ms': r.dispatch.p50,
  'dispatch p99 ms': r.dispatch.p99,
  'round trip p50 ms': r.roundTrip.p50,
  'round trip p99 ms': r.roundTrip.p99,
});
console.table(tableRows(results.modes, run, cells));
fs.mkdirSync(path.join(benchRoot, 'bench/results'), { recursive: true });
const out = path.join(
  benchRoot,
  'bench/results',
  `queue-${results.date.replace(/[:.]/g, '-')}.json`,
);
fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
process.stderr.write(`[bench] results written to ${path.relative(process.cwd(), out)}\n`);
