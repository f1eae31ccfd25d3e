#!/usr/bin/env node
// Starts Runplane in cluster mode on this machine: the six services as separate processes on the
// local NATS JetStream and PostgreSQL, plus a small gateway that routes the public paths the way
// the Kubernetes ingress does (/v2 → queue-api, /v1 → pod-rest, /graphql → template-graphql), so
// clients and the conformance suite see ONE base URL.
//
//   node scripts/cluster-up.mjs [--port 8090] [--fresh]
//   RUNPLANE_URL=http://127.0.0.1:8090 RUNPLANE_API_KEY=<printed key> bash ../shared/conformance/run.sh queue
//   node scripts/cluster-up.mjs [--port 8090] --down
//
// Each run has its own namespace, runplane_local_<port> unless RUNPLANE_BUS_NAMESPACE is set (printed
// at start): it names the NATS subjects, the JetStream stream and bucket AND the databases
// (<namespace>_<service>), so local clusters on different ports never touch each other's data.
// --fresh drops and recreates that namespace's databases first. Ctrl-C stops everything.
// --down drops exactly that namespace's databases, NATS stream and bucket and its master key file
// (run it with the same --port / RUNPLANE_BUS_NAMESPACE), then exits.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deleteNatsNamespace } from '@runplane/bus';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8090' },
    fresh: { type: 'boolean', default: false },
    down: { type: 'boolean', default: false },
  },
});
const gatewayPort = Number(values.port);
const apiKey = process.env.RUNPLANE_API_KEY ?? `local-${randomBytes(16).toString('hex')}`;
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const pgBase = process.env.RUNPLANE_LOCAL_PG ?? 'postgresql://postgres@127.0.0.1:5432';
const namespace = process.env.RUNPLANE_BUS_NAMESPACE ?? `runplane_local_${gatewayPort}`;

const services = [
  { name: 'secrets-vault', port: gatewayPort + 6 },
  { name: 'scheduler', port: gatewayPort + 2 },
  { name: 'template-graphql', port: gatewayPort + 5 },
  { name: 'pod-rest', port: gatewayPort + 4 },
  { name: 'webhook-sender', port: gatewayPort + 3 },
  { name: 'queue-api', port: gatewayPort + 1 },
];
const routes = [
  ['/v2/', 'queue-api'],
  ['/v1/users', 'secrets-vault'],
  ['/v1/apikeys', 'secrets-vault'],
  ['/v1/containerregistryauth', 'secrets-vault'],
  ['/v1/webhooks', 'webhook-sender'],
  ['/v1/', 'pod-rest'],
  ['/graphql', 'template-graphql'],
  ['/healthz', 'queue-api'],
  ['/readyz', 'queue-api'],
  // The console (web UI): its page `/` only, its files and its pages' paths (never /metrics or /docs).
  ['/', 'template-graphql'],
  ...['assets', ...consoleSections()].map((section) => [`/${section}`, 'template-graphql']),
];
/** The first path segments of the console's pages (packages/console/routes.json). */
function consoleSections() {
  const file = path.join(root, 'packages/console/routes.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).sections;
}
const dbName = (service) => `${namespace}_${service.replace(/-/g, '_')}`;

// The vault's master key (production mode needs one): a local key file per namespace, kept with
// the databases it encrypts (renewed by --fresh), unless RUNPLANE_MASTER_KEY(_FILE) is given.
const masterKeyFile = path.join(root, '.runplane', `cluster-${namespace}.master.key`);
function dropDatabases() {
  for (const s of services)
    execFileSync(
      'psql',
      [`${pgBase}/postgres`, '-qc', `DROP DATABASE IF EXISTS ${dbName(s.name)} WITH (FORCE)`],
      { stdio: 'inherit' },
    );
  fs.rmSync(masterKeyFile, { force: true });
}
if (values.down) {
  dropDatabases();
  const streams = await deleteNatsNamespace(natsUrl, namespace);
  process.stdout.write(
    `namespace ${namespace} removed: databases ${services.map((s) => dbName(s.name)).join(', ')}; ` +
      `NATS streams ${streams.length ? streams.join(', ') : '(none left)'}\n`,
  );
  process.exit(0);
}
process.stdout.write(
  `namespace ${namespace}: databases ${namespace}_*, NATS subjects ${namespace}.* ` +
    `(remove them with: node scripts/cluster-up.mjs --port ${gatewayPort} --down)\n`,
);
if (values.fresh) dropDatabases();
const masterKey =
  process.env.RUNPLANE_MASTER_KEY || process.env.RUNPLANE_MASTER_KEY_FILE
    ? {}
    : { RUNPLANE_MASTER_KEY_FILE: localMasterKey() };

function localMasterKey() {
  if (!fs.existsSync(masterKeyFile)) {
    fs.mkdirSync(path.dirname(masterKeyFile), { recursive: true });
    fs.writeFileSync(masterKeyFile, `${randomBytes(32).toString('base64')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  }
  return masterKeyFile;
}

let stopping = false;
const children = services.map((s) => {
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    NATS_URL: natsUrl,
    RUNPLANE_BUS_NAMESPACE: namespace,
    // Where workers reach the queue: the gateway, unless given (benchmarks point workers at queue-api itself).
    PORT: String(s.port),
    HOST: '127.0.0.1',
    RUNPLANE_PUBLIC_URL: process.env.RUNPLANE_PUBLIC_URL ?? `http://127.0.0.1:${gatewayPort}`,
    [`DATABASE_URL_${s.name.replace(/-/g, '_').toUpperCase()}`]: `${pgBase}/${dbName(s.name)}`,
    ...(s.name === 'secrets-vault' ? { RUNPLANE_API_KEY: apiKey, ...masterKey } : {}),
    ...(s.name === 'template-graphql' ? { RUNPLANE_CONSOLE: 'true' } : {}),
    // Webhook receivers of local tests listen on this machine; real clusters keep the default (off).
    ...(s.name === 'webhook-sender'
      ? { WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? 'true' }
      : {}),
  };
  return start(s, env);
});

/**
 * Runs one service; like Kubernetes, restarts it when it dies on its own (crash tests kill -9 a
 * service by the pid printed here and watch it come back).
 */
function start(s, env) {
  const child = spawn(
    process.execPath,
    // As the image starts them (see packages/cli/bin/runplane.js).
    [
      '--max-semi-space-size=64',
      path.join(root, 'packages/cli/bin/runplane.js'),
      'start',
      '--service',
      s.name,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const prefix = `[${s.name}] `;
  process.stderr.write(`${prefix}started (pid ${child.pid})\n`);
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (d) =>
      process.stderr.write(
        String(d)
          .split('\n')
          .filter(Boolean)
          .map((l) => prefix + l + '\n')
          .join(''),
      ),
    );
  child.on('exit', (code, signal) => {
    process.stderr.write(`${prefix}exited (${signal ?? code})\n`);
    if (stopping) return;
    process.stderr.write(`${prefix}restarting in 1 s\n`);
    setTimeout(() => {
      if (!stopping) children[children.indexOf(child)] = start(s, env);
    }, 1000);
  });
  return child;
}

const portOf = Object.fromEntries(services.map((s) => [s.name, s.port]));
const upstreamAgent = new http.Agent({ keepAlive: true, maxSockets: 512 });
const gateway = http.createServer((req, res) => {
  const route = routes.find(([prefix]) =>
    prefix === '/' ? /^\/(\?|$)/.test(req.url) : req.url.startsWith(prefix),
  );
  if (!route) {
    res.writeHead(404, { 'content-type': 'application/json' });
    return res.end(
      JSON.stringify({
        error: `no route ${req.method} ${req.url}`,
        message: `no route ${req.method} ${req.url}`,
        status: 404,
      }),
    );
  }
  // Hop-by-hop headers are the proxy's own business (RFC 9110 §7.6.1), as in any ingress.
  const headers = { ...req.headers };
  for (const h of ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer'])
    delete headers[h];
  const upstream = http.request(
    {
      host: '127.0.0.1',
      port: portOf[route[1]],
      method: req.method,
      path: req.url,
      headers,
      agent: upstreamAgent,
    },
    (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    // A service may answer early and close while the body is still being sent (413 for an
    // oversized /run): the write fails, but its answer is on the way. Give it a moment.
    setTimeout(() => {
      if (res.headersSent) return res.destroy(err);
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: `${route[1]} is not reachable`,
          message: `${route[1]} is not reachable`,
          status: 502,
        }),
      );
    }, 200);
  });
  req.pipe(upstream);
  res.on('close', () => upstream.destroy());
});
gateway.listen(gatewayPort, '127.0.0.1');

await waitReady();
process.stdout.write(
  `\nRunplane cluster ready\n  RUNPLANE_URL=http://127.0.0.1:${gatewayPort}\n  RUNPLANE_API_KEY=${apiKey}\n\n`,
);

function stop() {
  if (stopping) return;
  stopping = true;
  gateway.close();
  for (const c of children) c.kill('SIGTERM');
  Promise.all(
    children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))),
  ).then(() => process.exit(0));
}
// Should this script die some other way, its services must not outlive it.
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

async function waitReady() {
  const deadline = Date.now() + 120_000;
  for (const s of services) {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${s.port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) {
        process.stderr.write(`${s.name} did not become ready within 120 s\n`);
        stop();
        return;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}
