#!/usr/bin/env node
// What one `POST /v2/{id}/run` costs the server's CPU, against the floor of the stack it is built
// on: the same autocannon load on bare Fastify, on NestJS over Fastify with a guard and a
// ValidationPipe, on that NestJS route answered by another process over a NATS request (what one
// cluster hop adds at least) — bench/lib/floor-server.mjs: routes that do nothing but answer —
// and on a standalone Runplane (rate limits off, an endpoint without workers: each request
// validates, authenticates and commits a job). They take turns, `--rounds` times.
//
//   node bench/stack-floor.mjs [--seconds 8] [--rounds 3] [--connections 50]
//
// CPU is the server processes' user + system time from /proc over the measured load (all their
// threads, the embedded database included; with NATS, the responder's and nats-server's too),
// divided by the requests answered 2xx; req/s is what the one load achieved on this machine, next
// to its load average; then 3 s of one request at a time give a round trip without queueing.
// Prints the medians of the rounds; writes every round to bench/results/stack-floor-<date>.json.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { loadAverage, machine, processCpu, versions } from './lib/machine.mjs';
import { requirePositiveIntegers, round } from './lib/measure.mjs';
import { benchRoot, createIdleEndpoints, startServer } from './lib/runplane.mjs';

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
requirePositiveIntegers(opts, ['seconds', 'rounds', 'connections']);
const seconds = Number(opts.seconds);
const rounds = Number(opts.rounds);
const connections = Number(opts.connections);
const log = (msg) => console.error(`[stack-floor] ${msg}`);

/** A floor server (bench/lib/floor-server.mjs) in its own process. */
async function startFloor(kind, env = {}) {
  const child = spawn(
    process.execPath,
    [path.join(benchRoot, 'bench/lib/floor-server.mjs'), kind],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    },
  );
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening (\S+)/);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${kind} floor server exited ${code}`)));
  });
  return {
    processes: { [kind]: child.pid },
    url: `${url}/v2/floor/run`,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', r);
        child.kill();
      }),
  };
}

/** pids of the nats-server processes of this machine (none when NATS runs elsewhere). */
function localNatsServers() {
  try {
    const out = execFileSync('pgrep', ['-x', 'nats-server'], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** The NestJS floor answered over NATS by a responder process; nats-server's CPU counts too. */
async function startNatsFloor() {
  const env = { FLOOR_SUBJECT: randomBytes(4).toString('hex') };
  const responder = await startFloor('responder', env);
  const server = await startFloor('nest-nats', env);
  const natsServers = localNatsServers();
  if (!natsServers.length) log('no nats-server runs on this machine: its CPU is not counted');
  return {
    processes: {
      ...server.processes,
      ...responder.processes,
      ...Object.fromEntries(natsServers.map((pid, i) => [`nats-server${i || ''}`, pid])),
    },
    url: server.url,
    stop: async () => {
      await server.stop();
      await responder.stop();
    },
  };
}

async function startRunplane() {
  const apiKey = `rp_bench_${randomBytes(12).toString('hex')}`;
  const server = await startServer('standalone', {
    apiKey,
    env: { RUNPLANE_RATE_LIMITS: 'false' },
  });
  const [endpoint] = await createIdleEndpoints(apiClient(apiKey), server.base, 1);
  return {
    processes: { runplane: server.pid },
    url: `${server.base}/v2/${endpoint}/run`,
    apiKey,
    stop: server.stop,
  };
}

const systems = {
  fastify: () => startFloor('fastify'),
  nest: () => startFloor('nest'),
  'nest-nats': startNatsFloor,
  runplane: startRunplane,
};

async function load(target, duration, loadConnections = connections) {
  return autocannon({
    url: target.url,
    method: 'POST',
    headers: {
      authorization: `Bearer ${target.apiKey ?? 'floor'}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ input: { prompt: 'intake' } }),
    connections: loadConnections,
    duration,
    timeout: 30,
  });
}

async function measure(name) {
  const target = await systems[name]();
  try {
    await load(target, 2); // warm-up: JIT, connections, the embedded database's caches
    const cpu = () =>
      Object.fromEntries(
        Object.entries(target.processes).map(([n, pid]) => [n, processCpu(pid).seconds * 1e6]),
      );
    const before = cpu();
    const loadBefore = process.cpuUsage();
    const result = await load(target, seconds);
    const after = cpu();
    const cpuByProcess = Object.fromEntries(
      Object.keys(after).map((n) => [n, after[n] - before[n]]),
    );
    const serverCpu = Object.values(cpuByProcess).reduce((a, b) => a + b, 0);
    const loadCpu = process.cpuUsage(loadBefore);
    const alone = await load(target, 3, 1);
    const ok = result['2xx'];
    if (!ok || result.non2xx || alone.non2xx)
      throw new Error(`${name}: ${ok} answered 2xx, ${result.non2xx + alone.non2xx} not`);
    return {
      requestsPerSecond: round(ok / result.duration),
      serverCpuMicrosPerRequest: round(serverCpu / ok),
      cpuMicrosPerRequestByProcess: Object.fromEntries(
        Object.entries(cpuByProcess).map(([n, us]) => [n, round(us / ok)]),
      ),
      loadGeneratorCpuMicrosPerRequest: round((loadCpu.user + loadCpu.system) / ok),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      // One request at a time: a round trip without queueing (from the count: autocannon's
      // latencies are whole milliseconds).
      roundTripMsAlone: round((alone.duration * 1000) / alone['2xx']),
      loadAverage: loadAverage(),
    };
  } finally {
    await target.stop();
  }
}

const out = {
  date: new Date().toISOString(),
  machine: machine(),
  versions: await versions(),
  config: { seconds, rounds, connections },
  rounds: [],
};
const names = Object.keys(systems);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...names].reverse() : names;
  const round_ = {};
  for (const name of order) {
    log(`round ${r + 1}/${rounds}: ${name}`);
    round_[name] = await measure(name);
    log(`${name}: ${JSON.stringify(round_[name])}`);
  }
  out.rounds.push(round_);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
out.medians = Object.fromEntries(
  names.map((name) => [
    name,
    Object.fromEntries(
      [
        'requestsPerSecond',
        'serverCpuMicrosPerRequest',
        'loadGeneratorCpuMicrosPerRequest',
        'roundTripMsAlone',
      ].map((k) => [k, round(median(out.rounds.map((r) => r[name][k])))]),
    ),
  ]),
);
console.table(out.medians);
const dir = path.join(benchRoot, 'bench/results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `stack-floor-${out.date.replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify(out, null, 2));
log(`results written to ${path.relative(benchRoot, file)}`);
