#!/usr/bin/env node
// Where the machine's CPU goes per job: the e2e throughput run of the suite (one /runsync per job,
// `--clients` callers, `--workers` managed workers of `--concurrency`), with every process's CPU
// time read from /proc before and after it, summed by what the process is (a service, the
// workers, PostgreSQL's backends, nats-server, this benchmark's callers) and divided by the jobs.
//
//   node bench/job-cpu.mjs --mode standalone|cluster [--jobs 4000] [--clients 32]
//
// A warm-up of 500 jobs runs first. Writes JSON to bench/results/job-cpu-<date>.json.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { loadAverage, machine, processCpu, versions } from './lib/machine.mjs';
import { requirePositiveIntegers, round, throughput } from './lib/measure.mjs';
import { benchRoot, createEndpoint, runsyncSubmitter, startServer } from './lib/runplane.mjs';

const { values: opts } = parseArgs({
  options: {
    mode: { type: 'string', default: 'standalone' },
    jobs: { type: 'string', default: '4000' },
    clients: { type: 'string', default: '32' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
  },
});
if (!['standalone', 'cluster'].includes(opts.mode)) {
  console.error(`--mode ${opts.mode}: standalone or cluster`);
  process.exit(2);
}
requirePositiveIntegers(opts, ['jobs', 'clients', 'workers', 'concurrency']);
const jobs = Number(opts.jobs);
const log = (msg) => console.error(`[job-cpu] ${msg}`);

/** What a process is, for the table: a Runplane service, the workers, the databases, ... */
function role(pid, comm) {
  if (Number(pid) === process.pid) return 'benchmark callers';
  if (comm !== 'node') return comm === 'postgres' ? 'postgres (all backends)' : comm;
  const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  const service = cmd.match(/--service ([\w-]+)/);
  if (service) return service[1];
  if (cmd.includes('bench-worker')) return 'workers';
  if (cmd.includes('cluster-up')) return 'cluster-up (gateway)';
  if (cmd.includes('runplane.js start')) return 'runplane (standalone)';
  return 'node (other)';
}

/** Every process now, by pid: its name and CPU seconds so far (`processCpu`). */
function processTimes() {
  const times = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      times.set(pid, processCpu(pid));
    } catch {
      /* the process ended meanwhile */
    }
  }
  return times;
}

/** The whole machine's busy and total time from /proc/stat (all cores). */
function machineTimes() {
  const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1);
  const [, , , idle, iowait] = ticks.map(Number);
  const all = ticks.reduce((sum, t) => sum + Number(t), 0);
  return { busy: all - idle - iowait, all };
}

const apiKey = `rp_bench_${randomBytes(12).toString('hex')}`;
const api = apiClient(apiKey);
log(`starting a fresh ${opts.mode} server (rate limits off)`);
const server = await startServer(opts.mode, { apiKey, env: { RUNPLANE_RATE_LIMITS: 'false' } });
try {
  const endpoint = await createEndpoint(api, server.base, {
    workers: Number(opts.workers),
    concurrency: Number(opts.concurrency),
  });
  const submit = runsyncSubmitter(api, server.queueApiBase, endpoint);
  const clients = Number(opts.clients);
  await throughput(submit, { jobs: 500, clients });
  log(`${jobs} jobs, ${clients} callers`);
  const [before, machineBefore, loadBefore] = [processTimes(), machineTimes(), loadAverage()];
  const result = await throughput(submit, { jobs, clients });
  const [after, machineAfter] = [processTimes(), machineTimes()];
  const byRole = {};
  for (const [pid, { comm, seconds }] of after) {
    const spent = seconds - (before.get(pid)?.seconds ?? 0);
    if (spent <= 0) continue;
    let name;
    try {
      name = role(pid, comm);
    } catch {
      name = comm; // ended before its command line was read
    }
    byRole[name] = (byRole[name] ?? 0) + spent;
  }
  const msPerJob = Object.fromEntries(
    Object.entries(byRole)
      .map(([name, seconds]) => [name, round((seconds * 1000) / jobs)])
      .filter(([, ms]) => ms >= 0.005)
      .sort((a, b) => b[1] - a[1]),
  );
  const out = {
    date: new Date().toISOString(),
    machine: machine(),
    versions: await versions(),
    mode: opts.mode,
    jobs,
    clients,
    jobsPerSecond: result.jobsPerSecond,
    machineBusyPercent: round(
      ((machineAfter.busy - machineBefore.busy) / (machineAfter.all - machineBefore.all)) * 100,
    ),
    loadAverage: { before: loadBefore, after: loadAverage() },
    cpuMsPerJob: msPerJob,
    cpuMsPerJobInAll: round(Object.values(msPerJob).reduce((a, b) => a + b, 0)),
  };
  console.log(
    `${opts.mode}: ${out.jobsPerSecond} jobs/s, machine ${out.machineBusyPercent} % busy, ` +
      `${out.cpuMsPerJobInAll} ms of CPU per job in all`,
  );
  console.table(msPerJob);
  const dir = path.join(benchRoot, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `job-cpu-${out.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  log(`results written to ${path.relative(benchRoot, file)}`);
} finally {
  await server.stop();
}
