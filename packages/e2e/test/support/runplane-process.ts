import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root and the real CLI the e2e suites run (built: `turbo run build`). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const CLI = path.join(REPO_ROOT, 'packages/cli/bin/runplane.js');

/** Where the suites note timings worth a look (scripts/test.sh prints this file at the end). */
export const TIMINGS_FILE = path.join(os.tmpdir(), 'runplane-e2e-timings.txt');

/** The admin key every e2e server is started with. */
export const ADMIN_KEY = 'e2e-admin-key-0123456789abcdef';

/**
 * Names a directory made for the Jest run (global-setup.mjs) where the first standalone server
 * leaves a data dir that `runplane migrate` initialised (see dataDirTemplate). A standalone server
 * of the repository's CLI whose data dir does not exist yet starts on a copy of it: creating an
 * embedded database (initdb) takes seconds, ~10 s on a busy 2-core machine, and every suite paid
 * it. Suites that test the first start itself ask for a fresh directory (StartOptions).
 */
export const DATA_DIR_TEMPLATE_VAR = 'RUNPLANE_E2E_DATA_DIR_TEMPLATE';

/**
 * Variables of the test process that must not leak into a server: they would change its run mode
 * (NATS_URL, DATABASE_URL*), its port, or test-only switches (RUNPLANE_*; Jest sets NODE_ENV=test).
 */
const CONTROLLED = /^(NATS_URL|DATABASE_URL.*|RUNPLANE_.*|PORT|HOST|NODE_ENV|LOG_LEVEL|OTEL_.*)$/;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Milliseconds from the stop request (or from the spawn when nobody asked) to the exit. */
  ms: number;
}

/**
 * The environment of a server the suites start: the test process's, less the variables that
 * would change its run mode (CONTROLLED), plus `env` (undefined removes a variable).
 */
function serverEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!CONTROLLED.test(k) && v !== undefined) childEnv[k] = v;
  // Info level: the suites read the "runplane ready at <url>" line (PORT=0 picks a free port).
  // Every test user may run commands on the local provider (the operator's opt-in); the suite
  // of workload isolation checks the default.
  Object.assign(childEnv, {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    RUNPLANE_LOCAL_RUN_USERS: 'all',
  });
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete childEnv[k];
    else childEnv[k] = v;
  }
  return childEnv;
}

/** One `runplane` CLI process, started in its own process group so the whole group can be killed. */
export class RunplaneProcess {
  readonly child: ChildProcess;
  readonly startedAt = Date.now();
  readonly exited: Promise<Exit>;
  exit?: Exit;
  private output = '';
  private stopRequestedAt?: number;
  private readonly logStream: fs.WriteStream;

  constructor(
    readonly name: string,
    args: string[],
    env: Record<string, string | undefined>,
    readonly logFile: string,
    cli = CLI,
    options: StartOptions = {},
  ) {
    const childEnv = serverEnv(env);
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    if (cli === CLI && !options.freshDataDir && args[0] === 'start' && !args.includes('--service'))
      seedDataDir(childEnv.RUNPLANE_DATA_DIR, path.dirname(logFile));
    this.logStream = fs.createWriteStream(logFile);
    this.child = spawn(process.execPath, [cli, ...args], {
      cwd: path.dirname(logFile), // a relative path the server writes lands in the suite's temp dir
      env: childEnv,
      detached: true, // own process group: stopGroup() reaches anything it spawns too
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString('utf8');
      this.logStream.write(chunk);
    };
    this.child.stdout!.on('data', collect);
    this.child.stderr!.on('data', collect);
    this.exited = new Promise<Exit>((resolve) => {
      this.child.once('error', (err) => {
        this.output += `\n[e2e] spawn failed: ${err.message}\n`;
      });
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal, ms: Date.now() - (this.stopRequestedAt ?? this.startedAt) };
        this.logStream.end();
        running.delete(this);
        resolve(this.exit);
      });
    });
    running.add(this);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get log(): string {
    return this.output;
  }

  /** The last lines of the output, for failure messages. */
  tail(lines = 40): string {
    return `--- last output of ${this.name} (full log: ${this.logFile}; kept when RUNPLANE_E2E_KEEP=1) ---\n${this.output.split('\n').slice(-lines).join('\n')}`;
  }

  /** Resolves with the base URL once the server logs "runplane ready at <url>"; rejects if it exits first. */
  async waitForUrl(timeoutMs: number): Promise<string> {
    const deadline = this.startedAt + timeoutMs;
    for (;;) {
      const match = /runplane ready at (http:\/\/[\w.-]+:\d+)/.exec(this.output);
      if (match) return match[1];
      if (this.exit)
        throw new Error(
          `${this.name} exited (code ${this.exit.code}, signal ${this.exit.signal}) before it was ready\n${this.tail()}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `${this.name} did not log "runplane ready at" within ${timeoutMs} ms\n${this.tail()}`,
        );
      await sleep(100);
    }
  }

  /** Waits until GET /readyz answers 200; returns the URL and the milliseconds since the spawn. */
  async waitForReady(timeoutMs = 60_000): Promise<{ url: string; ms: number }> {
    const url = await this.waitForUrl(timeoutMs);
    const deadline = this.startedAt + timeoutMs;
    let last: string;
    for (;;) {
      try {
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return { url, ms: Date.now() - this.startedAt };
        last = `${res.status} ${await res.text()}`;
      } catch (err) {
        last = String((err as Error).cause ?? err);
      }
      if (this.exit)
        throw new Error(
          `${this.name} exited (code ${this.exit.code}) while waiting for /readyz\n${this.tail()}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `${this.name}: /readyz not 200 within ${timeoutMs} ms (last: ${last})\n${this.tail()}`,
        );
      await sleep(200);
    }
  }

  /** Waits for the exit; rejects after `timeoutMs`. */
  async waitForExit(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms\n${this.tail()}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` to the whole process group (no-op once it has exited). */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.exit || !this.child.pid) return;
    this.stopRequestedAt ??= Date.now();
    try {
      process.kill(-this.child.pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }

  /** Graceful stop of the group, then SIGKILL after `graceMs`. Never throws. */
  async stopGroup(graceMs = 10_000): Promise<Exit> {
    if (this.exit) return this.exit;
    this.signalGroup('SIGTERM');
    try {
      return await this.waitForExit(graceMs);
    } catch {
      this.signalGroup('SIGKILL');
      return this.exited;
    }
  }
}

export interface StartOptions {
  /** Start on an empty data dir, not on a copy of the run's initialised one (DATA_DIR_TEMPLATE_VAR). */
  freshDataDir?: boolean;
}

/** Copies the run's initialised data dir to `dataDir` when it does not exist yet. */
function seedDataDir(dataDir: string | undefined, cwd: string): void {
  if (!dataDir || dataDir === 'memory') return;
  const target = path.resolve(cwd, dataDir);
  if (fs.existsSync(target)) return;
  const template = dataDirTemplate();
  if (template) fs.cpSync(template, target, { recursive: true });
}

const MIGRATE_TIMEOUT_MS = 180_000;
/** How long a file waits for another's migration: its whole time, and some. */
const TEMPLATE_WAIT_MS = MIGRATE_TIMEOUT_MS + 20_000;

/**
 * The run's initialised data dir, made once by the first server that needs it: `runplane migrate`
 * into a staging dir, renamed into place. Files running beside this one wait for it (a lock dir)
 * instead of each making their own: a migration costs ~10 s of CPU on a busy 2-core machine.
 * Undefined outside a Jest run of this package (no DATA_DIR_TEMPLATE_VAR).
 */
function dataDirTemplate(): string | undefined {
  const runDir = process.env[DATA_DIR_TEMPLATE_VAR];
  if (!runDir) return undefined;
  const template = path.join(runDir, 'data');
  const lock = path.join(runDir, 'template.lock');
  const deadline = Date.now() + TEMPLATE_WAIT_MS;
  for (;;) {
    if (fs.existsSync(template)) return template;
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the suites' data dir template was not made within ${TEMPLATE_WAIT_MS / 1000} s (${lock} is held)`,
      );
    // Synchronous, as this runs in RunplaneProcess's constructor; a file waits only here, for the
    // one migration of the run, before its first server starts.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
  const staging = fs.mkdtempSync(path.join(runDir, 'staging-'));
  try {
    if (fs.existsSync(template)) return template; // made between the check and the lock
    const started = Date.now();
    const migrate = spawnSync(process.execPath, [CLI, 'migrate'], {
      env: serverEnv({ RUNPLANE_DATA_DIR: path.join(staging, 'data') }),
      encoding: 'utf8',
      timeout: MIGRATE_TIMEOUT_MS,
    });
    if (migrate.status !== 0)
      throw new Error(
        `runplane migrate (the suites' data dir template) failed: ${migrate.error ?? `exit ${migrate.status}`}\n${migrate.stdout}${migrate.stderr}`,
      );
    fs.renameSync(path.join(staging, 'data'), template);
    recordTiming(
      `data dir template: runplane migrate took ${((Date.now() - started) / 1000).toFixed(1)} s (standalone servers start on a copy)`,
    );
    return template;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(lock, { recursive: true, force: true }); // a failed migration lets a waiter try
  }
}

/** Every process still running: killed by killAll() (afterAll) and, as a last resort, at exit. */
const running = new Set<RunplaneProcess>();

/**
 * Starts the repository's CLI, or another copy of it (`cli`: its bin/runplane.js). A standalone
 * server of the repository's CLI gets a copy of the run's initialised data dir unless
 * `options.freshDataDir` (see DATA_DIR_TEMPLATE_VAR).
 */
export function startRunplane(
  name: string,
  args: string[],
  env: Record<string, string | undefined>,
  logDir: string,
  cli = CLI,
  options: StartOptions = {},
): RunplaneProcess {
  return new RunplaneProcess(name, args, env, path.join(logDir, `${name}.log`), cli, options);
}

/** Stops every process the suite started (TERM, then KILL), whole process groups. */
export async function killAll(graceMs = 10_000): Promise<void> {
  await Promise.all([...running].map((p) => p.stopGroup(graceMs)));
}

process.once('exit', () => {
  for (const p of running) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A suite's scratch directory. Open to other users (0755): workloads run as their own users and
 * read the files a test shares with them; the server's data dir inside it is its own (0700).
 */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `runplane-e2e-${prefix}-`));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/** Removes a suite's temp dir (data and logs) unless RUNPLANE_E2E_KEEP=1. */
export function removeTempDir(dir: string): void {
  if (process.env.RUNPLANE_E2E_KEEP === '1') {
    process.stderr.write(`[e2e] keeping ${dir} (RUNPLANE_E2E_KEEP=1)\n`);
    return;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Appends a line to TIMINGS_FILE and writes it to stderr, so it shows up in the test output too. */
export function recordTiming(line: string): void {
  process.stderr.write(`[e2e] ${line}\n`);
  try {
    fs.appendFileSync(TIMINGS_FILE, `${line}\n`);
  } catch {
    // best effort
  }
}

export interface HttpResult {
  status: number;
  contentType: string;
  body: any;
  text: string;
}

/** A request against a server; the body is parsed as JSON when it is JSON. */
export async function http(
  method: string,
  url: string,
  options: { key?: string; body?: unknown; rawBody?: string } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = options.key;
  let body: string | undefined;
  if (options.rawBody !== undefined || options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = options.rawBody ?? JSON.stringify(options.body);
  }
  const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body: parsed,
    text,
  };
}

/** True when nothing answers at `url` any more (connection refused or reset). */
export async function notAnswering(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch {
    return true;
  }
}

/**
 * Creates a template and a serverless endpoint on it through the REST API (`/v1/templates`,
 * `/v1/endpoints`; pod-rest) and returns the endpoint id for `/v2/{id}/...`. No workers
 * (workersMax 0), so jobs stay IN_QUEUE. Before endpoints existed any id was accepted: when the
 * REST routes are missing (404 NOT_FOUND from the router) `fallbackId` is returned instead.
 */
export async function provisionEndpoint(
  restUrl: string,
  key: string,
  fallbackId: string,
): Promise<string> {
  const suffix = Math.random().toString(36).slice(2, 8);
  const template = await http('POST', `${restUrl}/v1/templates`, {
    key,
    body: {
      name: `e2e-template-${suffix}`,
      imageName: 'runplane-e2e/worker:1',
      isServerless: true,
    },
  });
  if (template.status === 404 && template.body?.code === 'NOT_FOUND') return fallbackId;
  if (template.status !== 200 || typeof template.body?.id !== 'string') {
    throw new Error(
      `POST /v1/templates: expected 200 with an id, got ${template.status} ${template.text}`,
    );
  }
  const endpoint = await http('POST', `${restUrl}/v1/endpoints`, {
    key,
    body: {
      name: `e2e-endpoint-${suffix}`,
      templateId: template.body.id,
      workersMin: 0,
      workersMax: 0,
    },
  });
  if (endpoint.status !== 200 || typeof endpoint.body?.id !== 'string') {
    throw new Error(
      `POST /v1/endpoints: expected 200 with an id, got ${endpoint.status} ${endpoint.text}`,
    );
  }
  return endpoint.body.id;
}

/** Polls until `probe` returns a value; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
