// Starting a throwaway Runplane server (standalone or cluster) and measuring it through its public
// HTTP API only: the same calls a RunPod client and a worker built with the worker SDK make.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { now, sleep } from './measure.mjs';

export const benchRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a fresh server. standalone: `runplane start` on a temporary data dir, or on `dataDir` and
 * `port` when given (a restart on the same data, kept by stop()). cluster: the six
 * services on the local NATS + PostgreSQL through scripts/cluster-up.mjs (with its ingress-like
 * gateway), on databases and bus subjects of a namespace of their own, dropped by stop().
 * `env` adds settings (e.g. RUNPLANE_RATE_LIMITS); `profileDir` makes every Node process of the
 * server write a CPU profile there, from startProfiling() until it stops (lib/cpu-profile-hook.cjs).
 */
export async function startServer(
  mode,
  {
    apiKey,
    serverRoot = benchRoot,
    env: extra = {},
    profileDir,
    dataDir: givenDataDir,
    port: givenPort,
  } = {},
) {
  const port = givenPort ?? (await freePort());
  const env = {
    ...process.env,
    RUNPLANE_API_KEY: apiKey,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...extra,
  };
  for (const k of Object.keys(env)) if (/^(NATS_URL|DATABASE_URL.*)$/.test(k)) delete env[k];
  if (profileDir) {
    env.NODE_OPTIONS =
      `${env.NODE_OPTIONS ?? ''} --require ${path.join(benchRoot, 'bench/lib/cpu-profile-hook.cjs')}`.trim();
    env.RUNPLANE_BENCH_PROFILE_DIR = path.resolve(profileDir);
  }
  let child;
  let dataDir;
  let namespace;
  if (mode === 'standalone') {
    dataDir = givenDataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-bench-'));
    child = spawn(
      process.execPath,
      // As npm start, the image and the runplane bin start it (packages/cli/bin/runplane.js).
      ['--max-semi-space-size=64', path.join(serverRoot, 'packages/cli/bin/runplane.js'), 'start'],
      {
        env: { ...env, PORT: String(port), RUNPLANE_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
  } else {
    // The services listen on port+1..port+6 (queue-api is port+1); a free gateway port makes them
    // very likely free too.
    namespace = `rp_bench_${randomBytes(4).toString('hex')}`;
    // Workers call queue-api itself, as in-cluster workers reach its Service, not the ingress.
    child = spawn(
      process.execPath,
      [path.join(serverRoot, 'scripts/cluster-up.mjs'), '--port', String(port), '--fresh'],
      {
        env: {
          ...env,
          RUNPLANE_BUS_NAMESPACE: namespace,
          RUNPLANE_PUBLIC_URL: `http://127.0.0.1:${port + 1}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
  }
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const base = `http://127.0.0.1:${port}`;
  const exited = () => new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  /** A signal to the server's process group (its services and workers included). */
  const signalAll = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* gone */
    }
  };
  /** kill -9 of the server's process group, as a crash would; data kept. */
  const kill = async () => {
    signalAll('SIGKILL');
    await exited();
  };
  const stop = async () => {
    signalAll('SIGTERM');
    await Promise.race([exited(), sleep(20_000)]);
    signalAll('SIGKILL');
    if (dataDir && !givenDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (namespace) dropClusterDatabases(namespace);
  };
  const deadline = Date.now() + 180_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${mode} server exited:\n${log.slice(-3000)}`);
      const ready =
        mode === 'cluster'
          ? log.includes('Runplane cluster ready')
          : await fetch(`${base}/readyz`).then(
              (r) => r.ok,
              () => false,
            );
      if (ready) break;
      if (Date.now() > deadline)
        throw new Error(`${mode} server not ready in 180 s:\n${log.slice(-3000)}`);
      await sleep(250);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  // In cluster mode /v2 is served by queue-api itself at port+1; the gateway in front of it is a
  // development stand-in for the ingress (on a real cluster it runs on other machines), so the
  // queue measurements go to queue-api directly: clients here, workers through RUNPLANE_PUBLIC_URL.
  const queueApiBase = mode === 'cluster' ? `http://127.0.0.1:${port + 1}` : base;
  // With profileDir: starts the profiles of the server's own processes (cluster-up prints its
  // services' pids), leaving start-up out; they are written when the server stops.
  const startProfiling = () => {
    if (!profileDir) return;
    const pids = new Map([
      ['main', child.pid],
      ...[...log.matchAll(/\[([\w-]+)\] started \(pid (\d+)\)/g)].map((m) => [m[1], Number(m[2])]),
    ]);
    for (const pid of pids.values())
      try {
        process.kill(pid, 'SIGUSR2');
      } catch {
        /* gone */
      }
  };
  const pid = child.pid; // standalone: the server itself; cluster: scripts/cluster-up.mjs
  return { mode, base, queueApiBase, pid, stop, kill, startProfiling, log: () => log };
}

function dropClusterDatabases(namespace) {
  const dbs = [
    'secrets_vault',
    'scheduler',
    'template_graphql',
    'pod_rest',
    'webhook_sender',
    'queue_api',
  ].map((s) => `${namespace}_${s}`);
  for (const db of dbs) {
    try {
      execFileSync(
        'psql',
        [`${pgBase}/postgres`, '-qc', `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`],
        { stdio: 'ignore' },
      );
    } catch {
      /* best effort: a left-over bench database is harmless */
    }
  }
}

/**
 * Creates a template + endpoint whose managed workers run bench/bench-worker.mjs (a no-op handler
 * written with @runplane/worker-sdk) and waits until `workers` of them wait idle in job-take.
 * workers 0 gives an endpoint nobody serves (its jobs stay queued), for intake tests.
 */
export async function createEndpoint(api, base, { workers, concurrency, name = 'bench' }) {
  const template = await api.request(base, 'POST', '/v1/templates', {
    name: `${name}-${Date.now()}-${randomBytes(3).toString('hex')}`,
    imageName: 'runplane/bench-worker:1',
    isServerless: true,
    dockerStartCmd: ['node', path.join(benchRoot, 'bench/bench-worker.mjs')],
    env: { WORKER_CONCURRENCY: String(concurrency) },
  });
  const endpoint = await api.request(base, 'POST', '/v1/endpoints', {
    name,
    templateId: template.id,
    workersMin: workers,
    workersMax: workers,
  });
  const deadline = Date.now() + 90_000;
  while (workers > 0) {
    const health = await api.request(base, 'GET', `/v2/${endpoint.id}/health`);
    if (health.workers.idle >= workers) break;
    if (Date.now() > deadline)
      throw new Error(`workers did not become idle: ${JSON.stringify(health)}`);
    await sleep(200);
  }
  return endpoint.id;
}

/**
 * One /runsync call per job: the RunPod way to submit a job and get its result. `fields` go into
 * every request body beside the input (e.g. a webhook).
 */
export function runsyncSubmitter(api, base, endpointId, fields = {}) {
  return async (input) => {
    const submitted = now();
    const record = await api.request(base, 'POST', `/v2/${endpointId}/runsync?wait=60000`, {
      ...fields,
      input,
    });
    const observed = now();
    if (record.status !== 'COMPLETED')
      throw new Error(
        `job ${record.id} ended ${record.status}: ${JSON.stringify(record).slice(0, 300)}`,
      );
    return { submitted, observed, startedAt: record.output?.startedAt };
  };
}

/** `count` endpoints without workers (their jobs stay queued), sharing one template: intake targets. */
export async function createIdleEndpoints(api, base, count) {
  const template = await api.request(base, 'POST', '/v1/templates', {
    name: `intake-${Date.now()}-${randomBytes(3).toString('hex')}`,
    imageName: 'runplane/bench-worker:1',
    isServerless: true,
  });
  const ids = [];
  for (let i = 0; i < count; i++) {
    ids.push(
      (
        await api.request(base, 'POST', '/v1/endpoints', {
          name: `intake-${i}`,
          templateId: template.id,
          workersMin: 0,
          workersMax: 0,
        })
      ).id,
    );
  }
  return ids;
}
