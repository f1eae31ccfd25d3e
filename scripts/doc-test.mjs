#!/usr/bin/env node
// Runs the commands the README and the examples tell users to run, against a fresh standalone
// server, and fails when one of them does not work as written.
//
//   npm run build && node scripts/doc-test.mjs
//
// README: every ```sh block preceded by `<!-- doc-test -->` runs in one bash session, command by
// command. A comment line right after a command showing its JSON output (`# {"id":"<jobId>",...}`)
// is checked: the output must be JSON with the keys shown, a `"status":"COMPLETED"` shown must be
// the status, and `"<name>"` placeholders capture the value for later commands. The server listens on
// a free port; `localhost:8080` in the commands is rewritten to it (nothing else is).
// Examples: examples/curl/session.sh, the runpod-sdk and openai clients, the workers' local test modes
// (worker-python only where python3 can import runpod; skipped with a line saying so otherwise).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'change-me-to-a-long-random-string'; // the README's own example key
const results = [];
let server;

function check(name, fn) {
  const started = Date.now();
  try {
    fn();
    results.push({ name, ok: true, ms: Date.now() - started });
    process.stdout.write(`ok   ${name}\n`);
  } catch (err) {
    results.push({ name, ok: false, ms: Date.now() - started, err });
    process.stdout.write(
      `FAIL ${name}\n${String(err.message ?? err)
        .split('\n')
        .map((l) => `     ${l}`)
        .join('\n')}\n`,
    );
  }
}

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-doc-test-'));
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    RUNPLANE_API_KEY: KEY,
    RUNPLANE_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  for (const k of Object.keys(env)) if (/^(NATS_URL|DATABASE_URL.*)$/.test(k)) delete env[k];
  const child = spawn(
    process.execPath,
    [path.join(root, 'packages/cli/bin/runplane.js'), 'start'],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the server did not start:\n${log.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, port, dataDir, child, log: () => log };
}

function stopServer() {
  if (!server) return;
  try {
    process.kill(-server.child.pid, 'SIGTERM');
  } catch {
    /* gone */
  }
  spawnSync('sleep', ['2']);
  try {
    process.kill(-server.child.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  fs.rmSync(server.dataDir, { recursive: true, force: true });
}

// ---- README ---------------------------------------------------------------------------------------

/** The blocks marked for the doc test, as lists of {command, expect} (continuation lines joined). */
function readmeBlocks(file) {
  const text = fs.readFileSync(file, 'utf8');
  const blocks = [];
  const re = /<!-- doc-test -->\s*```sh\n([\s\S]*?)```/g;
  for (let m; (m = re.exec(text));) {
    const steps = [];
    const lines = m[1].split('\n');
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i];
      if (!line.trim() || (line.trim().startsWith('#') && !line.trim().startsWith('# {'))) continue;
      if (line.trim().startsWith('# {')) {
        if (steps.length) steps[steps.length - 1].expect = line.trim().slice(2);
        continue;
      }
      // A command: join `\` continuations and lines inside an open double-quoted string.
      while (
        (line.trimEnd().endsWith('\\') ||
          (line.split('"').length - line.split('\\"').length) % 2 === 1) &&
        i + 1 < lines.length
      ) {
        line = line.trimEnd().endsWith('\\')
          ? `${line.trimEnd().slice(0, -1)} ${lines[++i].trim()}`
          : `${line}\n${lines[++i]}`;
      }
      steps.push({ command: line });
    }
    blocks.push(steps);
  }
  return blocks;
}

function runReadme() {
  const blocks = readmeBlocks(path.join(root, 'README.md'));
  if (!blocks.length) throw new Error('README.md has no <!-- doc-test --> blocks');
  const captured = {};
  let prelude = '';
  for (const steps of blocks) {
    for (const step of steps) {
      let command = step.command.replaceAll('localhost:8080', `localhost:${server.port}`);
      command = command.replace(/<(\w+)>/g, (whole, name) => captured[name] ?? whole);
      if (/^\w+=\S*$/.test(command.trim())) {
        // a variable for the later commands
        prelude += `${command}\n`;
        continue;
      }
      const label = command.split('\n')[0].slice(0, 110);
      check(`README: ${label}`, () => {
        const out = execFileSync('bash', ['-c', `set -euo pipefail\n${prelude}${command}`], {
          cwd: root,
          encoding: 'utf8',
          timeout: 120_000,
        });
        if (!step.expect) return;
        let json;
        try {
          json = JSON.parse(out);
        } catch {
          throw new Error(`expected JSON like ${step.expect}\ngot: ${out.slice(0, 500)}`);
        }
        for (const [, key, name] of step.expect.matchAll(/"(\w+)":"<(\w+)>"/g)) {
          if (typeof json[key] !== 'string')
            throw new Error(
              `output has no string "${key}" to use as <${name}>: ${out.slice(0, 300)}`,
            );
          captured[name] ??= json[key];
          if (captured[name] !== json[key])
            throw new Error(`"${key}" is ${json[key]}, expected <${name}> = ${captured[name]}`);
        }
        for (const key of topLevelKeys(step.expect))
          if (!(key in json))
            throw new Error(`output lacks "${key}" shown in the README: ${out.slice(0, 300)}`);
        if (step.expect.includes('"status":"COMPLETED"') && json.status !== 'COMPLETED')
          throw new Error(
            `status ${json.status}, the README shows COMPLETED: ${out.slice(0, 300)}`,
          );
      });
    }
  }
}

/** The keys of the outermost object of a JSON-like text (which may contain `...`). */
function topLevelKeys(text) {
  const keys = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') {
        inString = false;
        if (depth === 1 && text[i + 1] === ':') keys.push(text.slice(start + 1, i));
      }
    } else if (c === '"') {
      inString = true;
      start = i;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

// ---- examples -------------------------------------------------------------------------------------

async function endpointFor(worker) {
  const call = async (p, body) => {
    const res = await fetch(`${server.url}${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const template = await call('/v1/templates', {
    name: `doc-${path.basename(path.dirname(worker))}-${Date.now()}`,
    imageName: 'doc/example:1',
    isServerless: true,
    dockerStartCmd: ['node', worker],
  });
  return (
    await call('/v1/endpoints', {
      name: 'doc-test',
      templateId: template.id,
      workersMin: 1,
      workersMax: 1,
    })
  ).id;
}

function runExample(name, args, env = {}) {
  check(`example: ${name}`, () => {
    execFileSync(args[0], args.slice(1), {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RUNPLANE_URL: server.url, RUNPLANE_API_KEY: KEY, ...env },
    });
  });
}

/** examples/worker-python in runpod-python's local mode, where python3 can import runpod. */
function runPythonExample() {
  const name = 'worker-python local test (streams a generator)';
  const probe = spawnSync('python3', ['-c', 'import runpod'], { stdio: 'ignore' });
  if (probe.status !== 0) {
    process.stdout.write(`skip example: ${name}: python3 cannot import runpod here\n`);
    return;
  }
  check(`example: ${name}`, () => {
    const run = spawnSync(
      'python3',
      ['examples/worker-python/handler.py', '--test_input', '{"input": {"stream": 3}}'],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true' },
      },
    );
    // runpod-python logs the chunks as Python dicts: {'i': 2}.
    const out = `${run.stdout}${run.stderr}`;
    if (run.status !== 0 || !/['"]i['"]: 2/.test(out))
      throw new Error(`exit ${run.status}, no third chunk in the output:\n${out}`);
  });
}

try {
  server = await startServer();
  process.stdout.write(`doc-test: server at ${server.url}\n`);
  runReadme();
  runExample('curl session (examples/curl/session.sh)', ['bash', 'examples/curl/session.sh']);
  const echo = await endpointFor(path.join(root, 'examples/worker-echo/worker.mjs'));
  runExample(
    'runpod-sdk client (examples/client-runpod-sdk)',
    [process.execPath, 'examples/client-runpod-sdk/index.mjs'],
    { ENDPOINT_ID: echo },
  );
  const openai = await endpointFor(path.join(root, 'examples/worker-openai/worker.mjs'));
  runExample(
    'openai client (examples/client-openai)',
    [process.execPath, 'examples/client-openai/index.mjs'],
    { ENDPOINT_ID: openai },
  );
  runExample('worker-echo local test', [
    process.execPath,
    'examples/worker-echo/worker.mjs',
    '--test_input',
    '{"input": {"echo": "hi"}}',
  ]);
  runExample('worker-typescript builds and runs its local test', [
    'bash',
    '-c',
    'node_modules/.bin/tsc -p examples/worker-typescript && node examples/worker-typescript/dist/worker.js --test_input \'{"input": {"text": "hello typed world"}}\'',
  ]);
  runPythonExample();
} catch (err) {
  results.push({ name: 'doc-test setup', ok: false, err });
  process.stdout.write(`FAIL doc-test setup: ${err.stack ?? err}\n`);
} finally {
  stopServer();
}

const failed = results.filter((r) => !r.ok);
process.stdout.write(
  `\ndoc-test: ${results.length - failed.length} passed, ${failed.length} failed\n`,
);
if (failed.length && server)
  process.stdout.write(`--- server log tail ---\n${server.log().slice(-3000)}\n`);
process.exit(failed.length ? 1 : 0);
