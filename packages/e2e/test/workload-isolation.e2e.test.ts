import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ADMIN_KEY,
  eventually,
  http,
  killAll,
  removeTempDir,
  startRunplane,
  tempDir,
  type RunplaneProcess,
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);
const IS_ROOT = process.getuid?.() === 0;

/**
 * What a tenant's code can reach on the local compute provider, tried from inside real workloads
 * the way an attacker would: the server's environment and data, another tenant's worker. And who
 * may run commands there at all (users with an admin key, unless the operator opts others in).
 */
describe('workload isolation on the local provider (standalone, default settings)', () => {
  const workDir = tempDir('isolation');
  const dataDir = path.join(workDir, 'data');
  let server: RunplaneProcess;
  let url: string;

  const as = (key: string) => ({
    call: (method: string, route: string, body?: unknown) =>
      http(method, `${url}${route}`, { key: `Bearer ${key}`, body }),
  });
  const admin = () => as(ADMIN_KEY);
  const newUser = async (scope: 'admin' | 'readwrite') => {
    const user = await admin().call('POST', '/v1/users', { name: `iso-${scope}` });
    const key = await admin().call('POST', '/v1/apikeys', {
      name: scope,
      userId: user.body.id,
      scope,
    });
    expect(key.status).toBe(200);
    return key.body.key as string;
  };
  /** A probe-worker endpoint of the key's user with one worker; its env as given. */
  const probeEndpoint = async (key: string, env: Record<string, string> = {}) => {
    const t = await as(key).call('POST', '/v1/templates', {
      name: `iso-${randomBytes(4).toString('hex')}`,
      imageName: 'runplane-e2e/probe:1',
      isServerless: true,
      dockerStartCmd: [process.execPath, PROBE_WORKER],
      env,
    });
    expect(t.status).toBe(200);
    const ep = await as(key).call('POST', '/v1/endpoints', {
      templateId: t.body.id,
      workersMin: 1,
      workersMax: 1,
    });
    expect(ep.status).toBe(200);
    return ep.body.id as string;
  };
  const runJob = async (key: string, ep: string, input: unknown) => {
    const id = (await as(key).call('POST', `/v2/${ep}/run`, { input })).body.id as string;
    const done = await eventually(
      async () => {
        const s = (await as(key).call('GET', `/v2/${ep}/status/${id}`)).body;
        return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s.status) && s;
      },
      `job ${id} to finish`,
      120_000,
    );
    expect(done.status).toBe('COMPLETED');
    return done.output;
  };

  beforeAll(async () => {
    server = startRunplane(
      'isolation',
      ['start'],
      {
        RUNPLANE_DATA_DIR: dataDir,
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_LOCAL_RUN_USERS: undefined, // the default: users with an admin key
      },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('a user without an admin key cannot run commands on the host: Pods and workers are refused', async () => {
    const key = await newUser('readwrite');
    const pod = await as(key).call('POST', '/v1/pods', {
      name: 'shell',
      imageName: 'x',
      dockerStartCmd: ['sh', '-c', 'cat /proc/1/environ'],
    });
    expect(pod.status).toBe(403);
    expect(pod.body.error).toMatch(/admin key/);
    const ep = await probeEndpoint(key);
    await as(key).call('POST', `/v2/${ep}/run`, { input: {} });
    // The autoscaler's start is refused the same way: no worker Pod of the endpoint ever runs.
    const health = await as(key).call('GET', `/v2/${ep}/health`);
    expect(health.body.workers.running ?? 0).toBe(0);
    const pods = await as(key).call('GET', `/v1/pods?includeWorkers=true&endpointId=${ep}`);
    expect(
      pods.body.filter((p: { desiredStatus: string }) => p.desiredStatus === 'RUNNING'),
    ).toEqual([]);
  });

  it('the data dir is private to the server: 0700 (nothing under it can be reached by others), the master key 0600', () => {
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const keyFiles = fs
      .readdirSync(dataDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => /master\.key$/.test(f));
    for (const f of keyFiles) expect(fs.statSync(path.join(dataDir, f)).mode & 0o777).toBe(0o600);
  });

  it("a tenant's worker runs as its own user and cannot read the server's environment, its data, or another tenant's worker", async () => {
    if (!IS_ROOT) {
      process.stderr.write(
        '[e2e] SKIPPED: workload users need a server running as root; this run is not root\n',
      );
      return;
    }
    // Tenant A (the operator's user) runs a worker holding a secret.
    await admin().call('POST', `/graphql`, {
      query:
        'mutation { secretCreate(input: {name: "iso_secret", value: "tenant-a-only"}) { id } }',
    });
    const epA = await probeEndpoint(ADMIN_KEY, { TOKEN: '{{ RUNPOD_SECRET_iso_secret }}' });
    const a = await runJob(ADMIN_KEY, epA, { whoami: true });
    // Tenant B, trusted to run commands (an admin key of its own user), attacks.
    const keyB = await newUser('admin');
    const epB = await probeEndpoint(keyB);
    const masterKey = fs
      .readdirSync(dataDir, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(dataDir, f))
      .find((f) => /master\.key$/.test(f));
    const targets = [
      `/proc/${server.pid}/environ`,
      `/proc/${a.pid}/environ`,
      path.join(dataDir, 'pgdata', 'PG_VERSION'),
      ...(masterKey ? [masterKey] : []),
    ];
    const b = await runJob(keyB, epB, { whoami: true, read: targets });
    expect(b.uid).not.toBe(0);
    expect(b.uid).not.toBe(a.uid);
    expect(a.uid).not.toBe(0);
    for (const target of targets) expect([target, b.read[target]]).toEqual([target, 'EACCES']);
  }, 240_000);

  it('once the server stopped, every file of its data dir is 0600 and every directory 0700', async () => {
    await server.stopGroup(20_000);
    const open: string[] = [];
    for (const entry of fs.readdirSync(dataDir, { withFileTypes: true, recursive: true })) {
      const file = path.join(entry.parentPath, entry.name);
      const mode = fs.statSync(file).mode & 0o777;
      if (entry.isFile() ? mode !== 0o600 : entry.isDirectory() && mode !== 0o700)
        open.push(`${file} ${mode.toString(8)}`);
    }
    expect(open).toEqual([]);
  }, 60_000);
});
