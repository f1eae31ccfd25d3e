#!/usr/bin/env node
// Chaos suite (issue 9): cluster mode on this machine (scripts/cluster-up.mjs: six services on the
// local NATS JetStream and PostgreSQL, restarted like Kubernetes would when they die), a steady
// load of jobs with webhooks, and faults injected one after another: kill -9 of queue-api, an
// outage of queue-api (paused for 40 s), kill -9 of the scheduler, webhook-sender,
// pod-rest, a worker process, a restart of NATS and a restart of PostgreSQL (the local cluster
// stopped and started again under load). Afterwards it checks, from the clients' records, the
// webhooks received and the services' databases, that every accepted job reached exactly one
// final state, none completed twice, none is stuck, and every webhook arrived at least once; and
// that no live worker was declared lost during the queue-api outage.
//
//   npm run build && npm run chaos            (= node bench/chaos.mjs)
//   node bench/chaos.mjs [--port 8490] [--rate 10] [--fault-every 20] [--no-nats] [--no-postgres]
//
// Loopback only; bounded in time (about 4-5 minutes). The NATS and PostgreSQL restarts stop and start
// the local nats-server and PostgreSQL cluster (the ones every local test uses): do not run other
// suites meanwhile, or pass --no-nats / --no-postgres.
// Prints a table of faults × (accepted, completed, lost, duplicated, stuck, webhooks missing) and
// exits 1 if any of the last four is not 0. Results also go to bench/results/chaos-<date>.json.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { offerAtRate } from './lib/pacing.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '8490' },
    rate: { type: 'string', default: '10' },
    'fault-every': { type: 'string', default: '20' },
    'no-nats': { type: 'boolean', default: false },
    'no-postgres': { type: 'boolean', default: false },
  },
});
const PORT = Number(opts.port);
const RATE = Number(opts.rate); // jobs per second
const FAULT_EVERY_MS = Number(opts['fault-every']) * 1000;
const base = `http://127.0.0.1:${PORT}`;
// scripts/cluster-up.mjs runs the services on the ports after the gateway's; queue-api's is the first.
const queueApiBase = `http://127.0.0.1:${PORT + 1}`;
// Job slots for the offered load: the jobs sleep 100–300 ms (200 on average), so RATE jobs a second
// keep RATE × 0.2 slots busy; a quarter more for the requeues after each fault. The endpoint keeps
// 2–3 workers and each runs more jobs at once as the rate grows (worker processes cost the machine
// more than slots in one of them).
const WORKERS_MIN = 2;
const WORKER_CONCURRENCY = Math.max(4, Math.ceil((RATE * 0.2 * 1.25) / WORKERS_MIN));
/** The workers' ping interval (short, so that a killed worker's jobs are requeued within seconds). */
const PING_INTERVAL_MS = 2000;
/** The share of --rate that must be accepted during the load for the rate to count as sustained. */
const SUSTAINED_SHARE = 0.95;
const namespace = `rp_chaos_${randomBytes(3).toString('hex')}`;
const apiKey = `chaos-${randomBytes(16).toString('hex')}`;
const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';
const NATS_SERVER = '/usr/sbin/nats-server';
const started = Date.now();
const log = (m) =>
  process.stdout.write(`[chaos +${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- cluster --------------------------------------------------------------------------------------

const pids = new Map();
let clusterLog = '';
const cluster = spawn(
  process.execPath,
  [path.join(root, 'scripts/cluster-up.mjs'), '--port', String(PORT), '--fresh'],
  {
    env: {
      ...process.env,
      RUNPLANE_BUS_NAMESPACE: namespace,
      RUNPLANE_API_KEY: apiKey,
      LOG_LEVEL: 'warn',
      // Faster liveness so a killed worker's job is requeued within seconds.
      RUNPLANE_WORKER_PING_INTERVAL_MS: String(PING_INTERVAL_MS),
      // An endpoint admits 100 /run a second (docs/limits.md), so a load above half that, with the
      // retries of whatever a fault refused, would meet the API's policy rather than the faults:
      // limits stay on (as deployed) up to 50 jobs/s and are off above.
      RUNPLANE_RATE_LIMITS: String(RATE <= 50),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
const ready = new Promise((resolve) =>
  cluster.stdout.on('data', (d) => {
    if (String(d).includes('Runplane cluster ready')) resolve();
  }),
);
cluster.stderr.on('data', (d) => {
  const text = String(d);
  clusterLog = (clusterLog + text).slice(-300_000);
  for (const m of text.matchAll(/^\[([a-z-]+)\] started \(pid (\d+)\)$/gm))
    pids.set(m[1], Number(m[2]));
});

/** Keep-alive connections: a new one per call cost the suite as much CPU as a service at 100/s. */
const client = apiClient(apiKey);

/**
 * One call of the public API, whatever its status. The queue routes (/v2) go to queue-api's own
 * port, as clients in a real cluster reach it through an ingress on other machines; the gateway
 * of scripts/cluster-up.mjs, a development stand-in for that ingress, serves the rest.
 */
async function api(method, p, body, headers = {}) {
  const res = await client.answer(p.startsWith('/v2/') ? queueApiBase : base, method, p, body, {
    headers,
    timeoutMs: 30_000,
  });
  return { ...res, retryAfter: res.headers['retry-after'] };
}

// ---- webhook receiver -------------------------------------------------------------------------------

const webhooks = new Map(); // jobId -> Set of webhook-ids
const firstWebhookAt = new Map(); // jobId -> when its first webhook arrived (epoch ms)
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => {
    body += c;
  });
  req.on('end', () => {
    try {
      const { id } = JSON.parse(body);
      if (!webhooks.has(id)) webhooks.set(id, new Set());
      if (!firstWebhookAt.has(id)) firstWebhookAt.set(id, Date.now());
      webhooks.get(id).add(String(req.headers['webhook-id']));
    } catch {
      /* not ours */
    }
    res.writeHead(200).end();
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

// ---- load ----------------------------------------------------------------------------------------

/** Every job the clients tried to submit: accepted once /run answered 200 (retries with the same Idempotency-Key). */
const jobs = [];
let window = 'warm-up';
let loadOn = true;

async function submitOne(endpointId, n, input = { sleep_ms: 100 + (n % 5) * 50, echo: n }) {
  const key = randomUUID();
  const record = { n, window, key, id: null, attempts: 0 };
  jobs.push(record);
  const deadline = Date.now() + 60_000;
  // As the official clients do: exponential back-off with jitter, and a 429's Retry-After. Every
  // job refused during a fault retrying at a fixed pace would make a storm that the endpoint's
  // rate limit (which counts refused requests too) turns into more refusals.
  let backoffMs = 250;
  while (Date.now() < deadline) {
    let waitMs = backoffMs;
    backoffMs = Math.min(backoffMs * 2, 4000);
    record.attempts += 1;
    try {
      const res = await api(
        'POST',
        `/v2/${endpointId}/run`,
        { input, webhook: hookUrl },
        { 'idempotency-key': key },
      );
      if (res.status === 200) {
        record.id = res.json.id;
        record.acceptedAt = Date.now();
        return;
      }
      record.lastAnswer = res.status;
      if (res.status === 429) waitMs = Math.max(waitMs, Number(res.retryAfter) * 1000 || 1000);
      else if (res.status < 500) {
        record.error = `${res.status} ${res.text.slice(0, 200)}`;
        return;
      }
    } catch (err) {
      // Connection refused while a service restarts: try again.
      record.lastAnswer = err.code ?? err.name;
    }
    await sleep(waitMs * (0.5 + Math.random()));
  }
  record.error = `not accepted within 60 s (last answer: ${record.lastAnswer})`;
}

/** Offers RATE jobs per second, by the clock, until the load stops. */
function load(endpointId) {
  return offerAtRate({ rate: RATE, isOn: () => loadOn, offer: (n) => submitOne(endpointId, n) });
}

// ---- faults --------------------------------------------------------------------------------------

function killService(name) {
  const pid = pids.get(name);
  if (!pid) throw new Error(`no pid known for ${name}`);
  process.kill(pid, 'SIGKILL');
  return `kill -9 ${name} (pid ${pid})`;
}

/** This run's worker processes (found by the tag its template puts in their environment) and their worker ids. */
function workerProcesses() {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes(`CHAOS_RUN=${namespace}`))
        found.push({
          pid: Number(pid),
          workerId: env.find((e) => e.startsWith('RUNPOD_POD_ID='))?.slice(14),
        });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}

/**
 * Kills a worker process. The previous fault may have taken the workers with it (a worker started
 * by the local provider dies when pod-rest's end of its output pipe closes, and the replacements
 * come only after the scheduler missed three pings and the autoscaler started new ones: 30–45 s on
 * a busy 2-core machine), so it waits up to a minute for one, whatever the fault window.
 */
async function killWorker() {
  const waitMs = Math.max(60_000, FAULT_EVERY_MS / 2);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [victim] = workerProcesses();
    if (victim) {
      process.kill(victim.pid, 'SIGKILL');
      return `kill -9 worker ${victim.workerId} (pid ${victim.pid})`;
    }
    if (Date.now() > deadline) throw new Error(`no worker process found within ${waitMs / 1000} s`);
    await sleep(500);
  }
}

const OUTAGE_MS = 40_000;
/** Live workers the scheduler declared lost because of a fault that did not touch them. */
const falselyLost = [];

/**
 * queue-api unreachable (its process paused) for 40 s: the workers stay alive, but none of their
 * calls gets through. A worker's long polls held by the scheduler when the outage began (job-take,
 * job-stop: up to 30 s) count as hearing it until they end, so the outage lasts longer than that
 * plus 3 missed ping intervals; and first every job slot gets a job that outlasts it (a worker
 * waiting in job-take is heard at every round, so only busy workers are exposed, as GPU workers
 * running one long job each are). The scheduler must not count the outage as their silence: 4
 * intervals after queue-api is back, any worker alive before it that was marked lost for missed
 * pings fails the run.
 */
async function pauseQueueApi(endpointId) {
  const pid = pids.get('queue-api');
  if (!pid) throw new Error('no pid known for queue-api');
  const before = workerProcesses();
  const long = [];
  const slots = before.length * WORKER_CONCURRENCY;
  await Promise.all(
    Array.from({ length: slots }, (_, i) => {
      const n = `outage-${i}`;
      return submitOne(endpointId, n, { sleep_ms: OUTAGE_MS + 4000, echo: n }).then(() => {
        const job = jobs.find((j) => j.n === n);
        if (job.id) long.push(job);
      });
    }),
  );
  const running = async () => {
    const states = await Promise.all(
      long.map((j) => api('GET', `/v2/${endpointId}/status/${j.id}`).then((r) => r.json?.status)),
    );
    return states.filter((s) => s === 'IN_PROGRESS').length;
  };
  const deadline = Date.now() + 30_000;
  while ((await running()) < slots && Date.now() < deadline) await sleep(250);
  process.kill(pid, 'SIGSTOP');
  try {
    await sleep(OUTAGE_MS);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await sleep(4 * PING_INTERVAL_MS);
  const ids = before.map((w) => w.workerId).filter((id) => /^[\w-]+$/.test(id ?? ''));
  const lost = ids.length
    ? psql(
        'scheduler',
        `SELECT id FROM "scheduler"."Worker" WHERE id IN (${ids.map((id) => `'${id}'`).join(',')}) AND reason = 'unhealthy: missed pings'`,
      )
        .split('\n')
        .filter(Boolean)
    : [];
  falselyLost.push(...lost);
  if (lost.length) log(`live workers lost during the queue-api outage: ${lost.join(', ')}`);
  return `queue-api paused (SIGSTOP) for ${OUTAGE_MS / 1000} s with ${before.length} live workers, ${slots} long jobs in their slots; ${lost.length} declared lost`;
}

function restartNats() {
  spawnSync('start-stop-daemon', ['--stop', '--oknodo', '--retry', '10', '--exec', NATS_SERVER]);
  const up = spawnSync('start-stop-daemon', [
    '--start',
    '--oknodo',
    '--background',
    '--exec',
    NATS_SERVER,
    '--',
    '-a',
    '127.0.0.1',
    '-p',
    '4222',
    '-js',
    '-sd',
    '/var/lib/nats-server',
    '-l',
    '/var/log/nats-server.log',
  ]);
  if (up.status !== 0) throw new Error(`nats-server did not start again: ${up.stderr}`);
  return 'restart NATS (stop, start)';
}

/**
 * Stops the local PostgreSQL cluster (fast shutdown: every connection is cut, as when a database
 * server crashes or fails over), waits a few seconds with it down, and starts it again.
 */
async function restartPostgres() {
  const version = fs
    .readdirSync('/etc/postgresql')
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  const ctl = (action, ...extra) =>
    spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', action, ...extra], {
      encoding: 'utf8',
    });
  const down = ctl('stop', '-m', 'fast');
  if (down.status !== 0) throw new Error(`PostgreSQL did not stop: ${down.stderr}`);
  await sleep(3000);
  const up = ctl('start');
  if (up.status !== 0) throw new Error(`PostgreSQL did not start again: ${up.stderr}`);
  return `restart PostgreSQL ${version}/main (fast stop, 3 s down, start)`;
}

const FAULTS = [
  ['queue-api', () => killService('queue-api')],
  ['queue-api-outage', pauseQueueApi],
  ['scheduler', () => killService('scheduler')],
  ['webhook-sender', () => killService('webhook-sender')],
  ['pod-rest', () => killService('pod-rest')],
  ['worker', killWorker],
  ...(opts['no-nats'] ? [] : [['nats', restartNats]]),
  ...(opts['no-postgres'] ? [] : [['postgres', restartPostgres]]),
];

// ---- verification --------------------------------------------------------------------------------

function psql(db, sql) {
  return execFileSync('psql', [`${pgBase}/${namespace}_${db}`, '-XAtc', sql], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024, // a row per job: tens of thousands at --rate 100
  }).trim();
}

const FINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
/** No webhook for this long: the backlog is not draining (what is left is stuck, or unannounced). */
const QUIET_MS = 90_000;
const MAX_DRAIN_MS = 15 * 60_000;

/**
 * Every accepted job's state once the backlog has drained. A final state announces itself with
 * a webhook, so this waits until every job has had one, or none came for QUIET_MS (at most
 * MAX_DRAIN_MS), and then reads each job's status (LOST: 404), 16 at a time; a job not final yet is
 * read once more a few seconds later (it may have been finishing).
 */
async function finalStatuses(endpointId, accepted) {
  const started = Date.now();
  let arrived = webhooks.size;
  let lastArrival = Date.now();
  while (accepted.some((j) => !webhooks.has(j.id))) {
    if (webhooks.size !== arrived) [arrived, lastArrival] = [webhooks.size, Date.now()];
    if (Date.now() - lastArrival > QUIET_MS || Date.now() - started > MAX_DRAIN_MS) break;
    await sleep(1000);
  }
  const status = new Map();
  for (const pause of [0, 5000]) {
    await sleep(pause);
    const pending = accepted.filter((j) => !FINAL.includes(status.get(j.id)));
    let next = 0;
    const reader = async () => {
      while (next < pending.length) {
        const j = pending[next++];
        // The endpoint's rate limit counts these reads too (limits are on up to 50 jobs/s): a 429
        // waits for its Retry-After, a failure a moment, ten times at most.
        for (let attempt = 0; attempt < 10; attempt++) {
          const res = await api('GET', `/v2/${endpointId}/status/${j.id}`).catch(() => null);
          if (res?.status === 200) status.set(j.id, res.json.status);
          else if (res?.status === 404) status.set(j.id, 'LOST');
          else {
            await sleep(res?.status === 429 ? Number(res.retryAfter) * 1000 || 1000 : 500);
            continue;
          }
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, reader));
  }
  return status;
}

async function main() {
  await Promise.race([
    ready,
    sleep(180_000).then(() => {
      throw new Error('the cluster did not start within 180 s');
    }),
  ]);
  log(`cluster up at ${base} (namespace ${namespace})`);
  const worker = path.join(root, 'examples/worker-echo/worker.mjs');
  const tpl = await api('POST', '/v1/templates', {
    name: `chaos-${namespace}`,
    imageName: 'chaos/echo:1',
    isServerless: true,
    dockerStartCmd: ['node', worker],
    env: { CHAOS_RUN: namespace, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) },
  });
  const ep = await api('POST', '/v1/endpoints', {
    name: 'chaos',
    templateId: tpl.json.id,
    workersMin: WORKERS_MIN,
    workersMax: WORKERS_MIN + 1,
    idleTimeout: 30,
  });
  if (ep.status !== 200) throw new Error(`could not create the endpoint: ${ep.text}`);
  const endpointId = ep.json.id;
  for (let i = 0; i < 360; i++) {
    const h = await api('GET', `/v2/${endpointId}/health`);
    if (h.json?.workers?.idle >= WORKERS_MIN) break;
    await sleep(500);
  }
  log('workers ready; steady load starts');
  const loading = load(endpointId);
  await sleep(FAULT_EVERY_MS / 2);
  const injected = [];
  for (const [name, fault] of FAULTS) {
    window = name;
    try {
      const what = await fault(endpointId);
      injected.push({ name, what, at: Date.now() });
      log(what);
    } catch (err) {
      injected.push({ name, error: String(err) });
      log(`fault ${name} could not be injected: ${err}`);
    }
    await sleep(FAULT_EVERY_MS);
  }
  window = 'after';
  await sleep(FAULT_EVERY_MS / 2);
  loadOn = false;
  const loadStopped = Date.now();
  const { offered, seconds } = await loading;
  const accepted = jobs.filter((j) => j.id);
  const refusals = {};
  for (const j of jobs) if (!j.id) refusals[j.error] = (refusals[j.error] ?? 0) + 1;
  log(
    `load stopped: ${jobs.length} submitted, ${accepted.length} accepted; waiting for every job to be final`,
  );
  if (accepted.length < jobs.length) log(`not accepted: ${JSON.stringify(refusals)}`);

  const status = await finalStatuses(endpointId, accepted);
  log('waiting for webhooks');
  const finals = accepted.filter((j) => FINAL.includes(status.get(j.id)));
  /** Stuck: still queued or running (or never read) once the backlog stopped draining. */
  const notFinal = (j) => !FINAL.includes(status.get(j.id)) && status.get(j.id) !== 'LOST';
  const hookDeadline = Date.now() + 120_000;
  while (finals.some((j) => !webhooks.has(j.id)) && Date.now() < hookDeadline) await sleep(2000);

  // The databases: final events per job (a job finishing twice would have two) and job rows.
  const deliveries = new Map(
    psql(
      'webhook_sender',
      `SELECT "jobId", count(*) FROM "webhook_sender"."WebhookDelivery" GROUP BY "jobId"`,
    )
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [id, c] = l.split('|');
        return [id, Number(c)];
      }),
  );
  const rows = new Map(
    psql(
      'scheduler',
      `SELECT id, status FROM "scheduler"."Job" WHERE "endpointId" = '${endpointId}' AND "deletedAt" IS NULL`,
    )
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('|')),
  );

  // Worker processes nobody manages any more (e.g. left running by a pod-rest that was killed).
  const known = new Set(
    psql(
      'scheduler',
      `SELECT id FROM "scheduler"."Worker" WHERE "endpointId" = '${endpointId}' AND state NOT IN ('stopped')`,
    )
      .split('\n')
      .filter(Boolean),
  );
  const processes = workerProcesses();
  const orphans = processes.filter((p) => !known.has(p.workerId));
  log(
    `worker processes alive: ${processes.length}, of which not known to the scheduler: ${orphans.length}${orphans.length ? ` (${orphans.map((o) => o.workerId).join(', ')})` : ''}`,
  );

  const windows = ['warm-up', ...FAULTS.map(([n]) => n), 'after'];
  const table = windows.map((w) => {
    const mine = jobs.filter((j) => j.window === w);
    const ok = mine.filter((j) => j.id);
    const count = (pred) => ok.filter(pred).length;
    return {
      fault: w,
      submitted: mine.length,
      accepted: ok.length,
      completed: count((j) => status.get(j.id) === 'COMPLETED' && rows.get(j.id) === 'COMPLETED'),
      lost: count((j) => status.get(j.id) === 'LOST' || !rows.has(j.id)),
      duplicated: count(
        (j) => (webhooks.get(j.id)?.size ?? 0) > 1 || (deliveries.get(j.id) ?? 0) > 1,
      ),
      stuck: count(notFinal),
      'webhooks missing': count((j) => FINAL.includes(status.get(j.id)) && !webhooks.has(j.id)),
      'not accepted': mine.length - ok.length,
    };
  });
  console.table(table);
  const stuck = accepted.filter(notFinal);
  if (stuck.length)
    log(
      `not final: ${stuck.length}, e.g. ${JSON.stringify(
        stuck.slice(0, 10).map((j) => ({
          id: j.id,
          window: j.window,
          status: status.get(j.id) ?? 'unread',
          webhook: webhooks.has(j.id),
        })),
      )}`,
    );
  // A fault that could not be injected proves nothing: the run fails.
  const notInjected = injected.filter((f) => f.error);
  const bad =
    table.reduce((n, r) => n + r.lost + r.duplicated + r.stuck + r['webhooks missing'], 0) +
    orphans.length +
    falselyLost.length +
    notInjected.length;
  // Whether the platform kept pace with the offered load: jobs accepted (and, for the record,
  // finished: first webhook received) while the load was on, per second of load.
  const during = (at) => at !== undefined && at <= loadStopped;
  const perSecond = (n) => Math.round((n / seconds) * 10) / 10;
  const lastWebhook = Math.max(...accepted.map((j) => firstWebhookAt.get(j.id) ?? 0));
  const rates = {
    loadSeconds: Math.round(seconds),
    offeredPerSecond: perSecond(offered),
    acceptedPerSecond: perSecond(accepted.filter((j) => during(j.acceptedAt)).length),
    finishedPerSecond: perSecond(accepted.filter((j) => during(firstWebhookAt.get(j.id))).length),
    lastWebhookAfterLoadSeconds: Math.max(0, Math.round((lastWebhook - loadStopped) / 1000)),
  };
  const sustained = rates.acceptedPerSecond >= SUSTAINED_SHARE * RATE;
  log(
    `rate ${RATE}/s with ${WORKERS_MIN}–${WORKERS_MIN + 1} workers × ${WORKER_CONCURRENCY}: offered ` +
      `${rates.offeredPerSecond}/s and accepted ${rates.acceptedPerSecond}/s over ${rates.loadSeconds} s of ` +
      `load (${sustained ? 'sustained' : `NOT sustained: below ${SUSTAINED_SHARE * 100} %`}); finished ` +
      `${rates.finishedPerSecond}/s meanwhile, the last webhook ${rates.lastWebhookAfterLoadSeconds} s after the load stopped`,
  );
  const otherFinal = accepted.filter((j) =>
    ['FAILED', 'CANCELLED', 'TIMED_OUT'].includes(status.get(j.id)),
  );
  if (otherFinal.length)
    log(
      `${otherFinal.length} jobs ended in another final state: ${[...new Set(otherFinal.map((j) => status.get(j.id)))].join(', ')}`,
    );
  const result = {
    date: new Date().toISOString(),
    namespace,
    rate: RATE,
    workers: { min: WORKERS_MIN, max: WORKERS_MIN + 1, concurrency: WORKER_CONCURRENCY },
    rates,
    sustained,
    faultEverySeconds: FAULT_EVERY_MS / 1000,
    injected,
    table,
    orphanWorkers: orphans.length,
    falselyLostWorkers: falselyLost,
    notAccepted: refusals,
    ok: bad === 0 && sustained,
  };
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  const resultFile = path.join(root, 'bench/results', `chaos-${result.date.replace(/[:.]/g, '-')}`);
  fs.writeFileSync(`${resultFile}.json`, `${JSON.stringify(result, null, 2)}\n`);
  // The services' own account of the run (the last 300 kB of their logs), for whoever reads a failure.
  fs.writeFileSync(`${resultFile}.cluster.log`, clusterLog);
  const problems = [
    notInjected.length && `fault(s) not injected (${notInjected.map((f) => f.name).join(', ')})`,
    falselyLost.length &&
      `${falselyLost.length} live worker(s) declared lost during the queue-api outage`,
    bad - notInjected.length - falselyLost.length &&
      `${bad - notInjected.length - falselyLost.length} job(s) lost, duplicated, stuck or without webhook, or orphan workers`,
    !sustained &&
      `the rate was not sustained (${rates.acceptedPerSecond} of ${RATE} jobs/s accepted)`,
  ].filter(Boolean);
  log(
    problems.length
      ? `FAIL: ${problems.join('; ')}`
      : `PASS: every fault injected; ${RATE} jobs/s sustained; 0 lost, 0 duplicated, 0 stuck, every webhook delivered, no orphan worker`,
  );
  return problems.length ? 1 : 0;
}

async function cleanup() {
  if (cluster.exitCode === null) {
    cluster.kill('SIGTERM');
    await Promise.race([new Promise((r) => cluster.once('exit', r)), sleep(40_000)]);
  }
  for (const s of [
    'queue_api',
    'scheduler',
    'webhook_sender',
    'pod_rest',
    'template_graphql',
    'secrets_vault',
  ]) {
    try {
      execFileSync(
        'psql',
        [`${pgBase}/postgres`, '-qc', `DROP DATABASE IF EXISTS ${namespace}_${s} WITH (FORCE)`],
        { stdio: 'ignore' },
      );
    } catch {
      /* best effort */
    }
  }
  try {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    for (const name of [`${namespace.toUpperCase()}_EVENTS`, `OBJ_${namespace}_blobs`])
      await jsm.streams.delete(name).catch(() => {});
    await nc.close();
  } catch {
    /* best effort */
  }
  receiver.close();
}

let code = 1;
try {
  code = await main();
} catch (err) {
  log(`chaos run failed: ${err.stack ?? err}`);
  process.stdout.write(
    `--- last cluster log lines ---\n${clusterLog.split('\n').slice(-60).join('\n')}\n`,
  );
} finally {
  await cleanup();
}
process.exit(code);
