#!/usr/bin/env node
// The benchmark suite (`npm run bench`): Runplane in standalone and cluster mode side by side with
// BullMQ (Redis) and pg-boss (PostgreSQL), on this machine, in one invocation.
//
//   npm run build && npm run bench              (= node bench/run.mjs: the default sizes below)
//   node bench/run.mjs --quick                  (a short smoke run)
//   node bench/run.mjs --full                   (issue 9's sizes: 20,000 e2e jobs, 2,000 latency jobs)
//   node bench/run.mjs --systems standalone,bullmq --jobs 5000
//   node bench/run.mjs --systems cluster --profile-dir /tmp/prof [--profile-phase throughput|intake]
//       (CPU profiles of the server's processes during that phase and until the server stops:
//        summarise with node bench/profile-summary.mjs <file>, or open in Chrome DevTools)
//
// For each system, through its public interface only:
//   - dispatch latency: --latency-jobs jobs one at a time with idle workers waiting; submit →
//     handler start, and submit → result observed; p50/p90/p99;
//   - e2e throughput: --jobs no-op jobs, one submit per job, --clients callers at once, each waiting
//     for its job's result before submitting the next; jobs/s from first submit to last result, and
//     "late": over the 9th tenth of the jobs (lower when a job's cost grows with the jobs stored);
//   - Runplane only: /run intake under autocannon (--intake-connections for --intake-seconds) on an
//     endpoint without workers, req/s accepted and latency; with rate limits off, and (unless
//     --no-limits-on) again with limits on, spread over --intake-endpoints endpoints so that no
//     endpoint reaches its limit: the difference is what checking the limits costs (--limits-on
//     adds this to --quick, which skips it).
// Every system gets the same worker side: --workers worker processes of --concurrency jobs each.
// With --input-kb N every job (and every /run of the intake) carries a chat-completion-like input
// of about N KiB instead of a few bytes.
// Runplane servers run with RUNPLANE_RATE_LIMITS=false except in the "limits on" intake: a default
// endpoint admits 200 /runsync per second and 100 /run per second (docs/limits.md), an API policy
// that the peers do not have and that would cap the machinery being measured.
//
// Prints one table (the peers' rows and Runplane/peer ratios) and writes JSON to bench/results/.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { runIntake } from './lib/intake.mjs';
import { loadAverage, machine, versions } from './lib/machine.mjs';
import { chatInput, latency, round, throughput, withInput } from './lib/measure.mjs';
import { startBullmq, startPgBoss } from './lib/peers.mjs';
import { ensureRedis } from './lib/redis.mjs';
import {
  benchRoot,
  createEndpoint,
  createIdleEndpoints,
  runsyncSubmitter,
  startServer,
} from './lib/runplane.mjs';

const presets = {
  quick: { jobs: 300, latencyJobs: 100, warmup: 20, intakeSeconds: 5, limitsOn: false },
  default: { jobs: 2000, latencyJobs: 500, warmup: 50, intakeSeconds: 30, limitsOn: true },
  full: { jobs: 20000, latencyJobs: 2000, warmup: 50, intakeSeconds: 30, limitsOn: true },
};
const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    systems: { type: 'string', default: 'standalone,cluster,bullmq,pg-boss' },
    jobs: { type: 'string' },
    'latency-jobs': { type: 'string' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    clients: { type: 'string', default: '32' },
    'intake-seconds': { type: 'string' },
    'intake-connections': { type: 'string', default: '50' },
    'intake-endpoints': { type: 'string', default: '100' },
    'limits-on': { type: 'boolean', default: false },
    'no-limits-on': { type: 'boolean', default: false },
    'profile-dir': { type: 'string' },
    'profile-phase': { type: 'string', default: 'throughput' },
    'input-kb': { type: 'string' },
  },
});
const preset = presets[opts.full ? 'full' : opts.quick ? 'quick' : 'default'];
const config = {
  preset: opts.full ? 'full' : opts.quick ? 'quick' : 'default',
  jobs: Number(opts.jobs ?? preset.jobs),
  latencyJobs: Number(opts['latency-jobs'] ?? preset.latencyJobs),
  warmup: preset.warmup,
  workers: Number(opts.workers),
  concurrency: Number(opts.concurrency),
  clients: Number(opts.clients),
  intakeSeconds: Number(opts['intake-seconds'] ?? preset.intakeSeconds),
  intakeConnections: Number(opts['intake-connections']),
  intakeEndpointsLimitsOn: Number(opts['intake-endpoints']),
  limitsOn: (preset.limitsOn || opts['limits-on']) && !opts['no-limits-on'],
  inputKb: opts['input-kb'] ? Number(opts['input-kb']) : undefined,
};
/** With --input-kb, what every job's input carries, for every system and the /run intake alike. */
const extraInput = config.inputKb ? chatInput(config.inputKb) : {};
const systems = opts.systems
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const apiKey = `bench-${randomBytes(16).toString('hex')}`;
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

const results = {
  date: new Date().toISOString(),
  machine: machine(),
  versions: await versions(),
  config,
  systems: {},
};
const startedAt = Date.now();

/** Dispatch latency then e2e throughput of one system, through its submitAndWait. */
async function measureQueue(label, submitJob, beforeThroughput = () => {}) {
  const submitAndWait = withInput(submitJob, extraInput);
  log(
    `${label}: dispatch latency (${config.latencyJobs} sequential jobs after ${config.warmup} warm-up)`,
  );
  const lat = await latency(submitAndWait, { jobs: config.latencyJobs, warmup: config.warmup });
  log(`${label}: e2e throughput (${config.jobs} jobs, ${config.clients} callers)`);
  beforeThroughput();
  const thr = await throughput(submitAndWait, { jobs: config.jobs, clients: config.clients });
  log(`${label}: ${thr.jobsPerSecond} jobs/s, dispatch p50 ${lat.dispatch.p50} ms`);
  return { ...lat, throughput: thr };
}

/** Fills `out` as it goes, so what was measured before a failure is kept. */
async function runplane(mode, out) {
  const api = apiClient(apiKey);
  out.settings = { rateLimits: false, workers: config.workers, concurrency: config.concurrency };
  log(`Runplane ${mode}: starting a fresh server (rate limits off)`);
  let server = await startServer(mode, {
    apiKey,
    env: { RUNPLANE_RATE_LIMITS: 'false' },
    profileDir: opts['profile-dir'],
  });
  try {
    const endpoint = await createEndpoint(api, server.base, {
      workers: config.workers,
      concurrency: config.concurrency,
    });
    const profileThroughput = () => {
      if (opts['profile-phase'] === 'throughput') server.startProfiling();
    };
    Object.assign(
      out,
      await measureQueue(
        `Runplane ${mode}`,
        runsyncSubmitter(api, server.queueApiBase, endpoint),
        profileThroughput,
      ),
    );
    const [idle] = await createIdleEndpoints(api, server.base, 1);
    if (opts['profile-phase'] === 'intake') server.startProfiling();
    log(
      `Runplane ${mode}: /run intake, rate limits off (${config.intakeConnections} connections, ${config.intakeSeconds} s, ${server.queueApiBase})`,
    );
    out.intake = await runIntake(api, server.queueApiBase, [idle], {
      apiKey,
      seconds: config.intakeSeconds,
      connections: config.intakeConnections,
      input: { prompt: 'intake', ...extraInput },
    });
    log(
      `Runplane ${mode}: ${out.intake.acceptedPerSecond} /run per s, p99 ${out.intake.latency.p99} ms`,
    );
  } catch (err) {
    throw withLog(err, server);
  } finally {
    await server.stop();
  }
  if (config.limitsOn) {
    log(`Runplane ${mode}: starting a fresh server (rate limits on, the default)`);
    server = await startServer(mode, { apiKey, profileDir: opts['profile-dir'] });
    try {
      const ids = await createIdleEndpoints(api, server.base, config.intakeEndpointsLimitsOn);
      log(`Runplane ${mode}: /run intake, rate limits on, spread over ${ids.length} endpoints`);
      out.intakeLimitsOn = await runIntake(api, server.queueApiBase, ids, {
        apiKey,
        seconds: config.intakeSeconds,
        connections: config.intakeConnections,
        input: { prompt: 'intake', ...extraInput },
      });
      log(
        `Runplane ${mode}: ${out.intakeLimitsOn.acceptedPerSecond} /run per s, p99 ${out.intakeLimitsOn.latency.p99} ms (limits on)`,
      );
    } catch (err) {
      throw withLog(err, server);
    } finally {
      await server.stop();
    }
  }
  api.close();
}

function withLog(err, server) {
  err.message += `\n--- server log tail ---\n${server.log().slice(-3000)}`;
  return err;
}

async function peer(label, start, out) {
  const sys = await start({ workers: config.workers, concurrency: config.concurrency });
  try {
    Object.assign(out, { settings: sys.settings }, await measureQueue(label, sys.submitAndWait));
  } finally {
    await sys.stop();
  }
}

const runners = {
  standalone: (out) => runplane('standalone', out),
  cluster: (out) => runplane('cluster', out),
  bullmq: async (out) => {
    const redis = await ensureRedis(log);
    try {
      results.versions.redis ??= (await versions()).redis;
      await peer('BullMQ', startBullmq, out);
    } finally {
      await redis.stop();
    }
  },
  'pg-boss': (out) => peer('pg-boss', startPgBoss, out),
};

for (const system of systems) {
  if (!runners[system])
    throw new Error(`unknown system ${system}; known: ${Object.keys(runners).join(', ')}`);
  const t0 = Date.now();
  const out = (results.systems[system] = {});
  try {
    await runners[system](out);
  } catch (err) {
    log(`${system} failed: ${err.stack}`);
    out.error = String(err.message).slice(0, 4000);
    process.exitCode = 1;
  }
  Object.assign(results.systems[system], {
    seconds: Math.round((Date.now() - t0) / 1000),
    loadAverageAfter: loadAverage(),
  });
}
results.machine.loadAverageAtEnd = loadAverage();
results.seconds = Math.round((Date.now() - startedAt) / 1000);

// ---- one table ------------------------------------------------------------------------------------

const names = {
  standalone: 'Runplane standalone',
  cluster: 'Runplane cluster',
  bullmq: `BullMQ ${results.versions.bullmq}`,
  'pg-boss': `pg-boss ${results.versions.pgBoss}`,
};
const defined = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)); // blank cells
const row = (r = {}, intake) =>
  defined({
    'e2e jobs/s': r.throughput?.jobsPerSecond,
    'e2e late jobs/s': r.throughput?.lateJobsPerSecond,
    'dispatch p50 ms': r.dispatch?.p50,
    'dispatch p90 ms': r.dispatch?.p90,
    'dispatch p99 ms': r.dispatch?.p99,
    'result p50 ms': r.roundTrip?.p50,
    'result p90 ms': r.roundTrip?.p90,
    'result p99 ms': r.roundTrip?.p99,
    '/run req/s': intake?.acceptedPerSecond,
    '/run p50 ms': intake?.latency.p50,
    '/run p99 ms': intake?.latency.p99,
    'load 1m': r.loadAverageAfter?.[0],
  });
const ratio = (a, b) => {
  const out = {};
  for (const [k, v] of Object.entries(a))
    if (k !== 'load 1m' && typeof b[k] === 'number' && b[k] !== 0) out[k] = round(v / b[k]);
  return out;
};
const table = {};
for (const [system, r] of Object.entries(results.systems)) {
  table[names[system]] = r.error && !r.throughput ? { 'e2e jobs/s': 'failed' } : row(r, r.intake);
  if (r.intakeLimitsOn) table[`${names[system]}, limits on`] = row({}, r.intakeLimitsOn);
}
for (const mode of ['standalone', 'cluster']) {
  for (const p of ['bullmq', 'pg-boss']) {
    const [a, b] = [results.systems[mode], results.systems[p]];
    if (a?.throughput && b?.throughput) table[`ratio ${mode} / ${p}`] = ratio(row(a), row(b));
  }
  const r = results.systems[mode];
  if (r?.intake && r.intakeLimitsOn)
    table[`ratio ${mode} limits on / off`] = ratio(row({}, r.intakeLimitsOn), row({}, r.intake));
}
results.table = table;

console.log(
  `\nRunplane benchmark suite, ${results.date}, ${results.machine.cpus} × ${results.machine.cpuModel}, ${results.machine.memoryGiB} GiB, ` +
    `load average ${results.machine.loadAverage.join(' ')} at start, ${results.machine.loadAverageAtEnd.join(' ')} at end; ` +
    `Node ${results.versions.node}, PostgreSQL ${results.versions.postgresql}, NATS ${results.versions.nats}, Redis ${results.versions.redis}`,
);
console.log(
  `${config.jobs} e2e jobs (${config.clients} callers), ${config.latencyJobs} latency jobs, ${config.workers} workers × ${config.concurrency}; ` +
    `/run: ${config.intakeConnections} connections × ${config.intakeSeconds} s; ${results.seconds} s in all`,
);
console.table(table);
console.log(
  'ratio rows: Runplane ÷ peer (jobs/s and req/s: above 1 = Runplane ahead; latencies: below 1 = Runplane ahead).',
);
console.log(
  'e2e late = jobs/s over the 9th tenth of the e2e jobs; dispatch = submit → handler start; result = submit → result observed by the submitter (idle workers, one job at a time).',
);

fs.mkdirSync(path.join(benchRoot, 'bench/results'), { recursive: true });
const file = path.join(
  benchRoot,
  'bench/results',
  `bench-${results.date.replace(/[:.]/g, '-')}.json`,
);
fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
log(`results written to ${path.relative(process.cwd(), file)}`);
