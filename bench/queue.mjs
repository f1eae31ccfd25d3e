#!/usr/bin/env node
// Queue benchmark: no-op job throughput and dispatch latency, in standalone and cluster mode.
//
//   node bench/queue.mjs [--mode standalone|cluster|both] [--jobs 2000] [--latency-jobs 500]
//                        [--workers 2] [--concurrency 8] [--clients 32] [--profile-dir <dir>]
//                        [--baseline <dir of another built checkout>]
//
// Per mode it starts a fresh server (standalone: `runplane start` on a temp data dir; cluster: the
// six services on the local NATS + PostgreSQL through scripts/cluster-up.mjs, which also runs the
// ingress-like gateway), creates an endpoint whose managed workers run bench/bench-worker.mjs, and
// measures, through the public HTTP API only:
//   - dispatch latency: one job at a time with idle workers waiting in job-take; submit → handler
//     start (the handler reports its start time) and submit → result observed (/runsync answers);
//   - throughput: `--jobs` no-op jobs, one /runsync call per job, `--clients` callers at once;
//     jobs/s from the first submit to the last result.
// Prints a table and writes JSON to bench/results/. Numbers go to docs/performance.md by hand,
// with the date and machine; the machine is noisy, so compare runs made side by side.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    jobs: { type: 'string', default: '2000' },
    'latency-jobs': { type: 'string', default: '500' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    clients: { type: 'string', default: '32' },
    // e.g. --profile-dir /tmp/prof: the standalone server runs with --cpu-prof (open in Chrome DevTools)
    'profile-dir': { type: 'string' },
    // Another checkout (built) to measure side by side: each mode runs against it too, and the
    // table shows current/baseline ratios.
    baseline: { type: 'string' },
  },
});
const config = {
  jobs: Number(opts.jobs),
  latencyJobs: Number(opts['latency-jobs']),
  workers: Number(opts.workers),
  concurrency: Number(opts.concurrency),
  clients: Number(opts.clients),
};
const modes = opts.mode === 'both' ? ['standalone', 'cluster'] : [opts.mode];
const apiKey = `bench-${randomBytes(16).toString('hex')}`;
const now = () => performance.timeOrigin + performance.now();

// ---- HTTP ----------------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function request(base, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(new URL(urlPath, base), {
      method, agent,
      headers: { authorization: `Bearer ${apiKey}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        if (res.statusCode !== 200) reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(json);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// ---- servers -------------------------------------------------------------------------------------

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startServer(mode, serverRoot = root) {
  const port = await freePort();
  const env = { ...process.env, RUNPLANE_API_KEY: apiKey, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
  for (const k of Object.keys(env)) if (/^(NATS_URL|DATABASE_URL.*)$/.test(k)) delete env[k];
  let child;
  let dataDir;
  if (mode === 'standalone') {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-bench-'));
    const profile = opts['profile-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${opts['profile-dir']}`] : [];
    child = spawn(process.execPath, [...profile, path.join(serverRoot, 'packages/cli/bin/runplane.js'), 'start'],
      { env: { ...env, PORT: String(port), RUNPLANE_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  } else {
    // Ports port+1..port+6 are the services; check they are free too (best effort).
    child = spawn(process.execPath, [path.join(serverRoot, 'scripts/cluster-up.mjs'), '--port', String(port), '--fresh'],
      { env: { ...env, RUNPLANE_BUS_NAMESPACE: 'runplane_bench' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  }
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${mode} server exited:\n${log.slice(-3000)}`);
    const ready = mode === 'cluster' ? log.includes('Runplane cluster ready') : await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`${mode} server not ready in 120 s:\n${log.slice(-3000)}`);
    await sleep(250);
  }
  const stop = async () => {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await Promise.race([new Promise((r) => child.once('exit', r)), sleep(20_000)]);
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { base, stop, log: () => log };
}

async function createEndpoint(base) {
  const template = await request(base, 'POST', '/v1/templates', {
    name: `bench-${Date.now()}`, imageName: 'runplane/bench-worker:1', isServerless: true,
    dockerStartCmd: ['node', path.join(root, 'bench/bench-worker.mjs')], env: { WORKER_CONCURRENCY: String(config.concurrency) },
  });
  const endpoint = await request(base, 'POST', '/v1/endpoints', {
    name: 'bench', templateId: template.id, workersMin: config.workers, workersMax: config.workers,
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const health = await request(base, 'GET', `/v2/${endpoint.id}/health`);
    if (health.workers.idle >= config.workers) return endpoint.id;
    if (Date.now() > deadline) throw new Error(`workers did not become idle: ${JSON.stringify(health)}`);
    await sleep(200);
  }
}

// ---- measurements --------------------------------------------------------------------------------

async function runsync(base, endpoint, input) {
  const submitted = now();
  const record = await request(base, 'POST', `/v2/${endpoint}/runsync?wait=60000`, { input });
  const observed = now();
  if (record.status !== 'COMPLETED') throw new Error(`job ${record.id} ended ${record.status}: ${JSON.stringify(record).slice(0, 300)}`);
  return { submitted, observed, startedAt: record.output?.startedAt };
}

async function latency(base, endpoint) {
  for (let i = 0; i < 50; i++) await runsync(base, endpoint, { warmup: i }); // JIT, connections, caches
  const dispatch = [];
  const roundTrip = [];
  for (let i = 0; i < config.latencyJobs; i++) {
    const r = await runsync(base, endpoint, { i });
    dispatch.push(r.startedAt - r.submitted);
    roundTrip.push(r.observed - r.submitted);
    await sleep(2); // let the workers go back to waiting in job-take
  }
  return { dispatch: summary(dispatch), roundTrip: summary(roundTrip) };
}

async function throughput(base, endpoint) {
  let next = 0;
  const started = now();
  const caller = async () => {
    while (next < config.jobs) {
      next += 1;
      await runsync(base, endpoint, {});
    }
  };
  await Promise.all(Array.from({ length: config.clients }, caller));
  const seconds = (now() - started) / 1000;
  return { jobs: config.jobs, seconds: round(seconds), jobsPerSecond: round(config.jobs / seconds) };
}

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { n: sorted.length, p50: round(at(50)), p90: round(at(90)), p99: round(at(99)), max: round(sorted[sorted.length - 1]) };
}

const round = (x) => Math.round(x * 100) / 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- main ----------------------------------------------------------------------------------------

const results = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.type()} ${os.release()}` },
  config,
  modes: {},
};

const runs = modes.flatMap((mode) => (opts.baseline ? [[mode, 'baseline', path.resolve(opts.baseline)], [mode, 'current', root]] : [[mode, 'current', root]]));
for (const [mode, which, serverRoot] of runs) {
  const label = opts.baseline ? `${mode} (${which})` : mode;
  process.stderr.write(`[bench] ${label}: starting the server\n`);
  const server = await startServer(mode, serverRoot);
  try {
    const endpoint = await createEndpoint(server.base);
    process.stderr.write(`[bench] ${label}: latency (${config.latencyJobs} sequential jobs)\n`);
    const lat = await latency(server.base, endpoint);
    process.stderr.write(`[bench] ${label}: throughput (${config.jobs} jobs, ${config.clients} callers)\n`);
    const thr = await throughput(server.base, endpoint);
    results.modes[label] = { ...lat, throughput: thr };
  } catch (err) {
    process.stderr.write(`[bench] ${label} failed: ${err.stack}\n--- server log tail ---\n${server.log().slice(-3000)}\n`);
    process.exitCode = 1;
  } finally {
    await server.stop();
  }
}
agent.destroy();

const rows = Object.entries(results.modes).map(([mode, r]) => ({
  mode,
  'jobs/s': r.throughput.jobsPerSecond,
  'dispatch p50 ms': r.dispatch.p50,
  'dispatch p99 ms': r.dispatch.p99,
  'round trip p50 ms': r.roundTrip.p50,
  'round trip p99 ms': r.roundTrip.p99,
}));
if (opts.baseline) {
  for (const mode of modes) {
    const [b, c] = [results.modes[`${mode} (baseline)`], results.modes[`${mode} (current)`]];
    if (!b || !c) continue;
    rows.push({
      mode: `${mode}: current/baseline`,
      'jobs/s': round(c.throughput.jobsPerSecond / b.throughput.jobsPerSecond),
      'dispatch p50 ms': round(c.dispatch.p50 / b.dispatch.p50),
      'dispatch p99 ms': round(c.dispatch.p99 / b.dispatch.p99),
      'round trip p50 ms': round(c.roundTrip.p50 / b.roundTrip.p50),
      'round trip p99 ms': round(c.roundTrip.p99 / b.roundTrip.p99),
    });
  }
}
console.table(rows);
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
const out = path.join(root, 'bench/results', `queue-${results.date.replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
process.stderr.write(`[bench] results written to ${path.relative(process.cwd(), out)}\n`);
