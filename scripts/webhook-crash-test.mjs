#!/usr/bin/env node
// Crash test of webhook delivery (issue 6): starts a local cluster (scripts/cluster-up.mjs) on its
// own port and namespace, finishes N jobs (default 500) that carry a webhook while it kills
// webhook-sender with SIGKILL (cluster-up restarts it, as Kubernetes would), and checks that every
// job's webhook arrives at least once after the restart, that duplicates carry the same
// webhook-id, and that every call verifies with the account's signing secret.
//
//   npm run build && node scripts/webhook-crash-test.mjs [--jobs 500] [--port 8290] [--kills 1]
//
// It acts as an external worker itself (an admin key is accepted on the worker routes), so job
// completions are paced and need no worker process. Exits 0 on success; prints a summary line.
import { spawn, execFileSync } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '500' },
    port: { type: 'string', default: '8290' },
    kills: { type: 'string', default: '1' },
  },
});
const JOBS = Number(values.jobs);
const PORT = Number(values.port);
const KILLS = Number(values.kills);
const namespace = `rp_whcrash_${randomBytes(3).toString('hex')}`;
const apiKey = `crash-${randomBytes(16).toString('hex')}`;
const base = `http://127.0.0.1:${PORT}`;
const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';
const started = Date.now();
const log = (m) =>
  process.stdout.write(`[crash-test +${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the cluster ----------------------------------------------------------------------------
const pids = new Map();
let clusterLog = '';
const cluster = spawn(
  process.execPath,
  [path.join(root, 'scripts/cluster-up.mjs'), '--port', String(PORT), '--fresh'],
  {
    env: {
      RUNPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
      ...process.env,
      RUNPLANE_BUS_NAMESPACE: namespace,
      RUNPLANE_API_KEY: apiKey,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let ready;
const readyP = new Promise((r) => (ready = r));
cluster.stdout.on('data', (d) => {
  if (String(d).includes('Runplane cluster ready')) ready();
});
cluster.stderr.on('data', (d) => {
  const text = String(d);
  clusterLog = (clusterLog + text).slice(-200_000);
  for (const m of text.matchAll(/^\[([a-z-]+)\] started \(pid (\d+)\)$/gm))
    pids.set(m[1], Number(m[2]));
  for (const m of text.matchAll(/^\[webhook-sender\] (exited .*|restarting.*)$/gm))
    log(`webhook-sender ${m[1]}`);
});
cluster.on('exit', (code, signal) => log(`cluster-up exited (${signal ?? code})`));

async function shutdown(code) {
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
  await dropBusState().catch((err) =>
    log(`could not remove the namespace's JetStream stream: ${err}`),
  );
  await receiver.close?.();
  process.exit(code);
}
/** The namespace's event stream and claim-check bucket on the shared NATS server. */
async function dropBusState() {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [`${namespace.toUpperCase()}_EVENTS`, `OBJ_${namespace}_blobs`])
      await jsm.streams.delete(name).catch(() => {});
  } finally {
    await nc.close();
  }
}

const fail = async (msg) => {
  log(`FAILED: ${msg}`);
  process.stdout.write(
    `--- last cluster log lines ---\n${clusterLog.split('\n').slice(-40).join('\n')}\n`,
  );
  process.stdout.write('0 passed, 1 failed\n');
  await shutdown(1);
};

// ---- the webhook receiver -------------------------------------------------------------------
const calls = []; // {jobId, webhookId, timestamp, signature, body, at}
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let jobId = null;
    try {
      jobId = JSON.parse(body).id;
    } catch {
      /* recorded as unparsable */
    }
    calls.push({
      jobId,
      webhookId: req.headers['webhook-id'],
      timestamp: req.headers['webhook-timestamp'],
      signature: req.headers['webhook-signature'],
      body,
      at: Date.now(),
    });
    res.writeHead(200).end('ok');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
receiver.close = () =>
  new Promise((r) => {
    receiver.closeAllConnections();
    http.Server.prototype.close.call(receiver, r);
  });
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

// ---- API helpers ----------------------------------------------------------------------------
async function api(method, p, body, { key = apiKey, raw = false } = {}) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      authorization: raw ? key : `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

function verify(secret, call) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${call.webhookId}.${call.timestamp}.${call.body}`)
    .digest();
  return String(call.signature ?? '')
    .split(' ')
    .some((s) => {
      const [v, sig] = s.split(',');
      const given = Buffer.from(sig ?? '', 'base64');
      return v === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

// ---- the run --------------------------------------------------------------------------------
try {
  log(`starting a cluster on port ${PORT}, namespace ${namespace}`);
  await Promise.race([
    readyP,
    sleep(180_000).then(() => {
      throw new Error('cluster not ready within 180 s');
    }),
  ]);
  log(`cluster ready; webhook-sender pid ${pids.get('webhook-sender')}`);

  const tpl = await api('POST', '/v1/templates', {
    name: `crash-${namespace}`,
    imageName: 'runplane/none:1',
    dockerStartCmd: ['true'],
    isServerless: true,
  });
  if (tpl.status !== 200) await fail(`template: ${tpl.status} ${tpl.text}`);
  const ep = await api('POST', '/v1/endpoints', {
    name: `crash-${namespace}`,
    templateId: tpl.json.id,
    workersMin: 0,
    workersMax: 0,
  });
  if (ep.status !== 200) await fail(`endpoint: ${ep.status} ${ep.text}`);
  const endpointId = ep.json.id;

  const jobIds = [];
  for (let i = 0; i < JOBS; i += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, JOBS - i) }, (_, k) =>
        api('POST', `/v2/${endpointId}/run`, { input: { n: i + k }, webhook: hookUrl }),
      ),
    );
    for (const r of batch) {
      if (r.status !== 200) await fail(`/run: ${r.status} ${r.text}`);
      jobIds.push(r.json.id);
    }
  }
  log(`submitted ${jobIds.length} jobs with a webhook`);

  // The test is the worker: takes batches and finishes them, paced so that the kill lands mid-stream.
  const workerId = `crash-worker-${randomBytes(3).toString('hex')}`;
  let finished = 0;
  const killsAt = Array.from({ length: KILLS }, (_, k) =>
    Math.floor((JOBS * (k + 1)) / (KILLS + 2)),
  );
  const killed = [];
  while (finished < JOBS) {
    const take = await api(
      'GET',
      `/v2/${endpointId}/job-take-batch/${workerId}?gpu=crash&batch_size=20&job_in_progress=0`,
      undefined,
      { raw: true },
    );
    if (take.status === 204) continue;
    if (take.status !== 200) await fail(`job-take-batch: ${take.status} ${take.text}`);
    const jobs = Array.isArray(take.json)
      ? take.json
      : take.json.id
        ? [take.json]
        : (take.json.jobs ?? []);
    await Promise.all(
      jobs.map((j) =>
        api(
          'POST',
          `/v2/${endpointId}/job-done/${workerId}/${j.id}?gpu=crash&isStream=false`,
          { output: { ok: j.input.n } },
          { raw: true },
        ),
      ),
    );
    finished += jobs.length;
    while (killsAt.length && finished >= killsAt[0]) {
      killsAt.shift();
      const pid = pids.get('webhook-sender');
      const received = new Set(calls.map((c) => c.jobId)).size;
      process.kill(pid, 'SIGKILL');
      killed.push({ pid, finished, received });
      log(
        `kill -9 webhook-sender (pid ${pid}) with ${finished}/${JOBS} jobs finished and ${received} webhooks received`,
      );
    }
    await sleep(40);
  }
  log(`all ${JOBS} jobs finished; waiting for every webhook`);

  const deadline = Date.now() + 180_000;
  const want = new Set(jobIds);
  for (;;) {
    const got = new Set(calls.map((c) => c.jobId));
    const missing = [...want].filter((id) => !got.has(id));
    if (!missing.length) break;
    if (Date.now() > deadline)
      await fail(
        `${missing.length} webhooks never arrived (e.g. ${missing.slice(0, 5).join(', ')})`,
      );
    await sleep(500);
  }
  const lastArrival = Math.max(...calls.map((c) => c.at));
  const restarts = killed.length;
  if (!killed.length) await fail('webhook-sender was never killed (too few jobs?)');

  // Same webhook-id for duplicates; every call signed with the account's secret.
  const byJob = new Map();
  for (const c of calls) byJob.set(c.jobId, [...(byJob.get(c.jobId) ?? []), c]);
  const dupJobs = [...byJob.values()].filter((cs) => cs.length > 1);
  const mixedIds = dupJobs.filter((cs) => new Set(cs.map((c) => c.webhookId)).size > 1);
  if (mixedIds.length)
    await fail(`${mixedIds.length} jobs got duplicates with different webhook-ids`);
  const secret = await api('GET', '/v1/webhooks/secret');
  if (secret.status !== 200) await fail(`GET /v1/webhooks/secret: ${secret.status} ${secret.text}`);
  const unsigned = calls.filter((c) => !verify(secret.json.key, c));
  if (unsigned.length)
    await fail(`${unsigned.length} calls did not verify with the signing secret`);
  const recorded = await api(
    'GET',
    `/v1/webhooks/deliveries?jobId=${encodeURIComponent(jobIds[0])}`,
  );
  if (
    recorded.status !== 200 ||
    recorded.json.length !== 1 ||
    recorded.json[0].status !== 'delivered'
  )
    await fail(`delivery record of ${jobIds[0]}: ${recorded.text}`);

  log(
    `OK: ${JOBS} jobs, ${restarts} kill -9 of webhook-sender, ${byJob.size} distinct webhooks received in ${calls.length} calls ` +
      `(${dupJobs.length} jobs delivered more than once, all with one webhook-id each), every call verified; ` +
      `last webhook ${((lastArrival - started) / 1000).toFixed(1)} s after start; kills at ${killed.map((k) => `${k.finished} finished/${k.received} received`).join(', ')}`,
  );
  process.stdout.write('1 passed, 0 failed\n');
  await shutdown(0);
} catch (err) {
  await fail(err?.stack ?? String(err));
}
