import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipIntegrationSuite } from './skips.js';

/** podman's settings for these tests (runc, cgroupfs, rlimits a container may set). */
export const CONTAINERS_CONF = fileURLToPath(new URL('../podman/containers.conf', import.meta.url));

/** A private registry's test user (the bcrypt hash below is of this password). */
export const REGISTRY_USER = 'runplane-test';
export const REGISTRY_PASSWORD = 'registry-test-password';
const REGISTRY_HTPASSWD = `${REGISTRY_USER}:$2b$05$XgUiBaL1KcyW4VukEE4nI.79OlmJJxsxf2qmt4l0/bZJdXsrhhQU.\n`;

export interface PodmanService {
  /** `unix:///...`: the value of DOCKER_HOST for a Docker client. */
  dockerHost: string;
  socket: string;
  /** Environment for podman CLI calls that must see the same settings. */
  env: NodeJS.ProcessEnv;
  /** A local registry with htpasswd auth (`127.0.0.1:<port>`), when docker-registry is installed. */
  registry?: string;
  /** Runs the podman CLI with these settings; returns its stdout. */
  podman(args: string[]): string;
  stop(): Promise<void>;
}

/**
 * Whether a suite that drives podman can run here (podman installed, running as root). When not,
 * the suite is skipped loudly; with RUNPLANE_REQUIRE_INTEGRATION=1 (CI) that is a failure.
 */
export function podmanAvailable(suite: string): boolean {
  const missing = !hasCommand('podman')
    ? 'podman is not installed'
    : process.getuid?.() !== 0
      ? 'podman tests run as root (rootless podman needs a user session)'
      : undefined;
  if (!missing) return true;
  skip(suite, missing);
  return false;
}

/**
 * Starts podman's Docker-compatible API (`podman system service`) on a socket of its own for a
 * test suite (in its beforeAll; `stop()` in its afterAll), with a private registry beside it when
 * `docker-registry` is installed.
 */
export async function startPodman(): Promise<PodmanService> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-podman-'));
  const children: ChildProcess[] = [];
  let registry: string | undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, CONTAINERS_CONF };
  if (hasCommand('docker-registry')) {
    const port = await freePort();
    registry = `127.0.0.1:${port}`;
    fs.writeFileSync(path.join(dir, 'htpasswd'), REGISTRY_HTPASSWD);
    fs.writeFileSync(
      path.join(dir, 'registry.yml'),
      [
        'version: 0.1',
        'log: { level: warn }',
        `storage: { filesystem: { rootdirectory: ${path.join(dir, 'registry')} } }`,
        `http: { addr: "${registry}" }`,
        `auth: { htpasswd: { realm: runplane-test, path: ${path.join(dir, 'htpasswd')} } }`,
      ].join('\n'),
    );
    children.push(
      spawn('docker-registry', ['serve', path.join(dir, 'registry.yml')], {
        stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'registry.log'), 'w')],
      }),
    );
    // Plain HTTP on loopback: podman must be told it is not TLS.
    fs.writeFileSync(
      path.join(dir, 'registries.conf'),
      `[[registry]]\nlocation = "${registry}"\ninsecure = true\n`,
    );
    env.CONTAINERS_REGISTRIES_CONF = path.join(dir, 'registries.conf');
    await until(() => httpStatus(`http://${registry}/v2/`).then((s) => s === 401), 'the registry');
  }
  const socket = path.join(dir, 'podman.sock');
  children.push(
    spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], {
      env,
      // conmon writes files (an `oom` marker when a container is OOM-killed) into its working
      // directory: the service's temp dir, not the package being tested.
      cwd: dir,
      stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'podman.log'), 'w')],
    }),
  );
  const stop = async () => {
    for (const child of children.reverse()) {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null)
        await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(() => ping(socket), `podman system service (log: ${dir}/podman.log)`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dockerHost: `unix://${socket}`,
    socket,
    env,
    registry,
    podman: (args) =>
      execFileSync('podman', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    stop,
  };
}

/**
 * A minimal image of a Node program, made without a registry or a Dockerfile: the `node` binary
 * and the libraries it links, plus `files` (image path → file or directory on this machine), as
 * one layer (`podman import`). Tagged with a hash of its contents, so it is built once per change.
 */
export function nodeImage(
  service: PodmanService,
  name: string,
  files: Record<string, string>,
  cmd: string[],
): string {
  const node = process.execPath;
  const libraries = execFileSync('ldd', [node], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /(\/\S+) \(0x/.exec(line)?.[1])
    .filter((p): p is string => !!p);
  const hash = createHash('sha256').update(JSON.stringify(cmd));
  for (const [target, source] of Object.entries(files).sort())
    hash.update(target).update(contentsOf(source));
  hash.update(fs.readFileSync(node));
  const tag = `localhost/${name}:${hash.digest('hex').slice(0, 12)}`;
  try {
    service.podman(['image', 'exists', tag]);
    return tag;
  } catch {
    /* not built yet */
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-image-'));
  try {
    const copy = (source: string, target: string) => {
      const to = path.join(root, target);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.cpSync(fs.realpathSync(source), to, { recursive: true, dereference: true });
    };
    copy(node, '/usr/local/bin/node');
    for (const lib of libraries) copy(lib, lib);
    for (const [target, source] of Object.entries(files)) copy(source, target);
    fs.mkdirSync(path.join(root, 'tmp'), { mode: 0o1777 });
    const tar = path.join(root, '..', `${path.basename(root)}.tar`);
    execFileSync('tar', ['-C', root, '-cf', tar, '.']);
    try {
      service.podman(['import', '-c', `CMD ${JSON.stringify(cmd)}`, tar, tag]);
    } finally {
      fs.rmSync(tar, { force: true });
    }
    return tag;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function contentsOf(source: string): Buffer {
  const stat = fs.statSync(source);
  if (!stat.isDirectory()) return fs.readFileSync(source);
  const parts = fs
    .readdirSync(source, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((entry) => {
      const file = path.join(source, entry);
      return fs.statSync(file).isDirectory()
        ? Buffer.from(entry)
        : Buffer.concat([Buffer.from(entry), fs.readFileSync(file)]);
    });
  return Buffer.concat(parts);
}

function skip(suite: string, why: string): void {
  skipIntegrationSuite(`${suite}: ${why}`);
}

function hasCommand(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => fs.existsSync(path.join(dir, command)));
}

function ping(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath: socket, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

function httpStatus(url: string): Promise<number> {
  return fetch(url, { signal: AbortSignal.timeout(2000) }).then(
    (res) => res.status,
    () => 0,
  );
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
