#!/usr/bin/env node
// Kill -9 of the standalone server under load: `runplane start` on a data directory of its own,
// an endpoint with managed workers, /run jobs submitted at a steady rate; then the server's
// whole process tree (server and workers, as a crashed machine or container would lose them) is
// killed with SIGKILL, the server is started again on the same data directory while the clients
// keep submitting, and afterwards every job the server accepted (answered 200 with an id) must
// reach COMPLETED exactly once: none lost (404), none stuck, none failed.
//
//   npm run build && node bench/standalone-kill.mjs [--rate 100] [--before 10] [--after 10] [--kills 1]
//
// Loopback only; about a minute per kill. It also prints how long after the restart began jobs
// complete again (the workers that died with the server must be replaced first). Exits 1 on any lost, stuck or
// failed job; results also go to bench/results/standalone-kill-<date>.json.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { apiClient } from './lib/http.mjs';
import { sleep } from './lib/measure.mjs';
import { benchRoot, createEndpoint, freePort, startServer } from './lib/runplane.mjs';
import { offerAtRate } from './lib/pacing.mjs';

const { values: opts } = parseArgs({
  options: {
    // Jobs per second offered (below what the workers finish, so the queue drains).
    rate: { type: 'string', default: '100' },
    before: { type: 'string', default: '10' },
    after: { type: 'string', default: '10' },
    kills: { type: 'string', default: '1' },
  },
});
const log = (msg) => console.log(`[standalone-kill +${process.uptime().toFixed(1)}s] ${msg}`);
const apiKey = `kill-${randomBytes(16).toString('hex')}`;
const api = apiClient(apiKey);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-kill-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

let server;
const start = () =>
  startServer('standalone', { apiKey, dataDir, port, env: { RUNPLANE_RATE_LIMITS: 'false' } });

const accepted = new Map(); // id → phase it was accepted in
let phase = 'before kill 1';
let submitting = true;
let refused = 0;

/** Offers `--rate` /run jobs per second (at most 64 in flight) until the load stops. */
function load(endpointId) {
  return offerAtRate({
    rate: Number(opts.rate),
    isOn: () => submitting,
    maxInFlight: 64,
    offer: () =>
      api.request(base, 'POST', `/v2/${endpointId}/run`, { input: { n: accepted.size } }).then(
        (job) => accepted.set(job.id, phase),
        () => refused++, // the server is down: not accepted, nothing to find later
      ),
  });
}

/**
 * When a job next completes on the restarted server (its completed count grows): the workers that
 * died with it must be replaced first. Undefined after 120 s.
 */
async function firstCompletion(endpointId) {
  const completed = async () =>
    (await api.request(base, 'GET', `/v2/${endpointId}/health`)).jobs.completed;
  const start = await completed();
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await sleep(250);
    if ((await completed().catch(() => start)) > start) return Date.now();
  }
  return undefined;
}

const results = { date: new Date().toISOString(), options: opts, kills: [] };
let exitCode = 0;
try {
  server = await start();
  const endpointId = await createEndpoint(api, base, { workers: 2, concurrency: 4 });
  log(`server up at ${base}, data dir ${dataDir}; load starts`);
  const loading = load(endpointId);
  for (let k = 1; k <= Number(opts.kills); k++) {
    phase = `before kill ${k}`;
    await sleep(Number(opts.before) * 1000);
    const before = accepted.size;
    await server.kill();
    log(`kill -9 of the server's process tree after ${before} accepted jobs`);
    phase = `restart ${k}`;
    const restarted = Date.now();
    server = await start();
    log(`restarted on the same data dir in ${((Date.now() - restarted) / 1000).toFixed(1)} s`);
    const kill = { acceptedBefore: before, restartMs: Date.now() - restarted };
    results.kills.push(kill);
    phase = `after kill ${k}`;
    const resuming = firstCompletion(endpointId).then((at) => {
      kill.resumedMs = at === undefined ? undefined : at - restarted;
      log(
        at === undefined
          ? 'no job completed within 120 s of the restart'
          : `jobs complete again ${((at - restarted) / 1000).toFixed(1)} s after the restart began`,
      );
    });
    await sleep(Number(opts.after) * 1000);
    await resuming;
  }
  submitting = false;
  const { offered, seconds } = await loading;
  results.load = { offered, seconds, offeredPerSecond: offered / seconds };
  log(
    `load stopped: ${offered} offered in ${seconds.toFixed(1)} s (${(offered / seconds).toFixed(1)}/s), ` +
      `${accepted.size} accepted, ${refused} refused while down`,
  );

  // Every accepted job must end COMPLETED; a job running when its workers died is requeued once
  // the restarted server declares them lost.
  const pending = new Set(accepted.keys());
  const outcome = { completed: 0, lost: 0, failed: 0, stuck: 0 };
  const deadline = Date.now() + 180_000;
  while (pending.size && Date.now() < deadline) {
    for (const id of [...pending]) {
      try {
        const job = await api.request(base, 'GET', `/v2/${endpointId}/status/${id}`);
        if (job.status === 'COMPLETED') outcome.completed++;
        else if (['FAILED', 'CANCELLED', 'TIMED_OUT'].includes(job.status)) {
          outcome.failed++;
          log(`job ${id} (${accepted.get(id)}) ended ${job.status}: ${JSON.stringify(job.error)}`);
        } else continue;
      } catch (err) {
        if (!/: 404 /.test(String(err))) continue;
        outcome.lost++;
        log(`job ${id} (${accepted.get(id)}) is lost: ${err.message}`);
      }
      pending.delete(id);
    }
    if (pending.size) await sleep(1000);
  }
  outcome.stuck = pending.size;
  for (const id of pending) log(`job ${id} (${accepted.get(id)}) is not final after 180 s`);
  Object.assign(results, { accepted: accepted.size, refusedWhileDown: refused, ...outcome });
  console.table([{ accepted: accepted.size, ...outcome, 'refused while down': refused }]);
  if (outcome.lost || outcome.failed || outcome.stuck || outcome.completed !== accepted.size) {
    log('FAIL');
    exitCode = 1;
  } else log(`PASS: ${accepted.size} accepted jobs, all completed, across ${opts.kills} kill -9`);
} catch (err) {
  log(`error: ${err.stack ?? err}`);
  exitCode = 1;
} finally {
  submitting = false;
  if (server) await server.kill();
  api.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const out = path.join(benchRoot, 'bench/results');
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `standalone-kill-${results.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(results, null, 2));
}
process.exit(exitCode);
