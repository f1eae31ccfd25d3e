import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
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
  type HttpResult,
  type RunplaneProcess,
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: Buffer): string[] {
  const hits: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(needle)) hits.push(file);
  }
  return hits;
}

/**
 * Templates, secrets and rolling releases through the public APIs of a standalone server (the real
 * CLI): GraphQL for secrets, REST for templates and endpoints, the queue API for jobs, and real
 * managed workers (support/probe-worker.mjs) started by the local compute provider.
 */
describe('templates, secrets and rolling releases (standalone)', () => {
  const workDir = tempDir('templates-secrets');
  const dataDir = path.join(workDir, 'data');
  let server: RunplaneProcess;
  let url: string;
  const responses: HttpResult[] = [];

  const call = async (method: string, route: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await http(method, `${url}${route}`, { key: `Bearer ${key}`, body });
    responses.push(res);
    return res;
  };
  const gql = async (query: string) => {
    const res = await http('POST', `${url}/graphql?api_key=${ADMIN_KEY}`, { body: { query } });
    responses.push(res);
    return res;
  };
  const template = async (env: Record<string, string>) => {
    const res = await call('POST', '/v1/templates', {
      name: `e2e-${randomBytes(4).toString('hex')}`,
      imageName: 'runplane-e2e/probe:1',
      isServerless: true,
      dockerStartCmd: [process.execPath, PROBE_WORKER],
      env,
    });
    expect(res.status).toBe(200);
    return res.body as { id: string; env: Record<string, string> };
  };
  const endpoint = async (templateId: string, workers: number) => {
    const res = await call('POST', '/v1/endpoints', {
      name: 'e2e',
      templateId,
      workersMin: workers,
      workersMax: workers,
    });
    expect(res.status).toBe(200);
    return res.body as { id: string; version: number };
  };
  /** Submits a job and waits for its end (the first one waits for its worker to start). */
  const runJob = async (ep: string, input: unknown, key = ADMIN_KEY) => {
    const id = (await call('POST', `/v2/${ep}/run`, { input }, key)).body.id as string;
    const done = await eventually(async () => {
      const s = (await call('GET', `/v2/${ep}/status/${id}`, undefined, key)).body;
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s.status) && s;
    }, `job ${id} to finish`);
    expect(done.status).toBe('COMPLETED');
    return done.output;
  };

  beforeAll(async () => {
    server = startRunplane(
      'templates-secrets',
      ['start'],
      { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('a secret reaches the worker resolved, and its value is in no API response, no log line and no stored byte', async () => {
    const value = `e2e-secret-${randomBytes(12).toString('hex')}`;
    const name = `e2e_token_${randomBytes(3).toString('hex')}`;
    const created = await gql(
      `mutation { secretCreate(input: {name: "${name}", value: "${value}", description: "e2e"}) { id name description } }`,
    );
    expect(created.body).toEqual({
      data: { secretCreate: { id: expect.any(String), name, description: 'e2e' } },
    });

    const t = await template({
      TOKEN: `{{ RUNPOD_SECRET_${name} }}`,
      TIGHT: `Bearer {{RUNPOD_SECRET_${name}}}`,
      PLAIN: 'plain',
    });
    expect(t.env.TOKEN).toBe(`{{ RUNPOD_SECRET_${name} }}`);
    const ep = await endpoint(t.id, 1);
    const out = await runJob(ep.id, { env: ['PLAIN'], env_sha256: ['TOKEN', 'TIGHT'] });
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(out).toEqual({ PLAIN: 'plain', TOKEN: sha(value), TIGHT: sha(`Bearer ${value}`) });

    // Everything a user can read about it.
    await call('GET', `/v1/templates/${t.id}`);
    await call('GET', '/v1/templates');
    await call('GET', `/v1/endpoints/${ep.id}?includeTemplate=true&includeWorkers=true`);
    await call('GET', `/v2/${ep.id}/health`);
    await gql(
      `{ myself { secrets { id name description createdAt updatedAt } podTemplates { id env { key value } } } podTemplate(id: "${t.id}") { env { key value } } }`,
    );
    expect(responses.length).toBeGreaterThan(8);
    for (const res of responses) expect(res.text).not.toContain(value);

    // The unknown-secret case fails the start instead of running with the reference as its value.
    const bad = await template({ TOKEN: '{{ RUNPOD_SECRET_does_not_exist }}' });
    const badEp = await endpoint(bad.id, 1);
    await eventually(
      async () => (await call('GET', `/v2/${badEp.id}/health`)).body?.workers?.throttled === 1,
      'the failed start to back off (throttled)',
      30_000,
    );
    await call('DELETE', `/v1/endpoints/${badEp.id}`);

    // Stop the server so every write reaches the data dir, then search it byte for byte.
    await server.stopGroup(20_000);
    const log = server.log;
    expect(log).toContain('secrets-vault master key loaded');
    expect(log).not.toContain(value);
    const valueBytes = Buffer.from(value);
    expect(filesContaining(dataDir, Buffer.from(name)).length).toBeGreaterThan(0); // the search finds what is stored in clear
    expect(filesContaining(dataDir, valueBytes)).toEqual([]);
    expect(filesContaining(dataDir, Buffer.from(valueBytes.toString('base64'))).length).toBe(0);
    expect(fs.statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);

    // Back up on the same data dir (same master key): the secret still resolves.
    server = startRunplane(
      'templates-secrets-2',
      ['start'],
      { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
    expect((await runJob(ep.id, { env_sha256: ['TOKEN'] })).TOKEN).toBe(sha(value));
  }, 150_000);

  it("a managed worker's key cannot act as another managed worker, and dies with its worker", async () => {
    const t = await template({});
    const ep = await endpoint(t.id, 2);
    const workers = await eventually(async () => {
      const list = (await call('GET', `/v1/endpoints/${ep.id}/workers`)).body as Array<{
        id: string;
        state: string;
      }>;
      const up = list.filter((w) => w.state !== 'EXITED');
      return up.length === 2 && up.map((w) => w.id);
    }, 'two workers');
    // The tenant's own code reads its key: the worst it can do with it is bounded.
    const out = await runJob(ep.id, { env: ['RUNPOD_AI_API_KEY', 'RUNPOD_POD_ID'] });
    const key = out.RUNPOD_AI_API_KEY as string;
    const self = out.RUNPOD_POD_ID as string;
    const other = workers.find((w: string) => w !== self)!;
    const asWorker = (workerId: string) =>
      http('GET', `${url}/v2/${ep.id}/ping/${workerId}`, { key });
    expect((await asWorker(self)).status).toBe(200);
    // Not as the endpoint's other managed worker: no marking it unhealthy, no posting as it.
    const impersonated = await asWorker(other);
    expect(impersonated.status).toBe(403);
    expect(impersonated.body.error).toMatch(/belongs to worker/);
    const unhealthy = await http('GET', `${url}/v2/${ep.id}/ping/${other}?status=unhealthy`, {
      key,
    });
    expect(unhealthy.status).toBe(403);
    const forged = await http('POST', `${url}/v2/${ep.id}/job-done/${other}/job-1`, {
      key,
      body: { output: 'forged' },
    });
    expect(forged.status).toBe(403);

    // No worker allowed any more: the workers are stopped, and the key stops working.
    expect(
      (await call('PATCH', `/v1/endpoints/${ep.id}`, { workersMin: 0, workersMax: 0 })).status,
    ).toBe(200);
    await eventually(
      async () => (await asWorker(self)).status === 401,
      'the stopped worker key to be refused',
      120_000,
    );
    expect((await http('GET', `${url}/v2/${ep.id}/health`, { key })).status).toBe(401);
  }, 180_000);

  it('a template update bumps the endpoint version; idle workers are replaced at once, a busy one finishes its job first', async () => {
    const release = path.join(workDir, `release-${randomBytes(4).toString('hex')}`);
    const t = await template({ RELEASE: 'v1' });
    const ep = await endpoint(t.id, 2);
    // Both workers up (two jobs held at once need two workers).
    const both = [path.join(workDir, 'warm-a'), path.join(workDir, 'warm-b')];
    const warm = await Promise.all(
      both.map(async (file) => {
        const res = await call('POST', `/v2/${ep.id}/run`, {
          input: { wait_for_file: file, env: ['RUNPOD_POD_ID'] },
        });
        return res.body.id as string;
      }),
    );
    await eventually(
      async () => (await call('GET', `/v2/${ep.id}/health`)).body.jobs.inProgress === 2,
      'two v1 workers busy',
    );
    both.forEach((f) => fs.writeFileSync(f, ''));
    for (const id of warm)
      await eventually(
        async () => (await call('GET', `/v2/${ep.id}/status/${id}`)).body.status === 'COMPLETED',
        'warm-up jobs',
      );

    // A long job on one v1 worker; the other v1 worker is idle.
    const long = (
      await call('POST', `/v2/${ep.id}/run`, {
        input: { wait_for_file: release, env: ['RELEASE', 'RUNPOD_POD_ID'] },
      })
    ).body.id as string;
    const running = await eventually(async () => {
      const s = (await call('GET', `/v2/${ep.id}/status/${long}`)).body;
      return s.status === 'IN_PROGRESS' && s;
    }, 'the long job to start');
    const busyWorker = running.workerId as string;

    const before = (await call('GET', `/v1/endpoints/${ep.id}`)).body.version as number;
    expect(
      (await call('POST', `/v1/templates/${t.id}/update`, { env: { RELEASE: 'v2' } })).status,
    ).toBe(200);
    const after = (await call('GET', `/v1/endpoints/${ep.id}`)).body.version as number;
    expect(after).toBe(before + 1);

    // workersMax is 2 and the busy v1 worker keeps its slot: a v2 worker answering means the idle
    // v1 worker was replaced, while the long job still runs on its worker.
    const fresh = await eventually(async () => {
      const output = await runJob(ep.id, { env: ['RELEASE', 'RUNPOD_POD_ID'] });
      return output.RELEASE === 'v2' && output;
    }, 'a v2 worker');
    expect(fresh.RUNPOD_POD_ID).not.toBe(busyWorker);
    expect((await call('GET', `/v2/${ep.id}/status/${long}`)).body).toMatchObject({
      status: 'IN_PROGRESS',
      workerId: busyWorker,
    });

    // The busy worker finishes its job (never cancelled or requeued), then it is replaced too.
    fs.writeFileSync(release, '');
    const done = await eventually(async () => {
      const s = (await call('GET', `/v2/${ep.id}/status/${long}`)).body;
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s.status) && s;
    }, 'the long job to finish');
    expect(done).toMatchObject({
      status: 'COMPLETED',
      retries: 0,
      workerId: busyWorker,
      output: { RELEASE: 'v1', RUNPOD_POD_ID: busyWorker },
    });
    await eventually(
      async () => {
        // Two jobs held at once: both workers answer, and both must be v2 ones.
        const gate = path.join(workDir, `gate-${randomBytes(4).toString('hex')}`);
        const ids = await Promise.all(
          [0, 1].map(
            async () =>
              (
                await call('POST', `/v2/${ep.id}/run`, {
                  input: { wait_for_file: gate, env: ['RELEASE', 'RUNPOD_POD_ID'] },
                })
              ).body.id as string,
          ),
        );
        await eventually(
          async () => (await call('GET', `/v2/${ep.id}/health`)).body.jobs.inProgress === 2,
          'both workers busy',
          30_000,
        );
        fs.writeFileSync(gate, '');
        const outs = await Promise.all(
          ids.map((id) =>
            eventually(
              async () => {
                const s = (await call('GET', `/v2/${ep.id}/status/${id}`)).body;
                return s.status === 'COMPLETED' && s.output;
              },
              'gate jobs',
              30_000,
            ),
          ),
        );
        return outs.every((o) => o.RELEASE === 'v2' && o.RUNPOD_POD_ID !== busyWorker);
      },
      'every worker of the endpoint on v2',
      90_000,
    );
  }, 180_000);

  it("a public template's owner cannot change what another user's endpoint runs: it stays on its revision, scaled-up workers too, until its owner sets templateId again", async () => {
    // Two ordinary users, made with the admin key.
    const userKey = async (name: string) => {
      const user = await call('POST', '/v1/users', { name });
      expect(user.status).toBeLessThan(300);
      const key = await call('POST', '/v1/apikeys', {
        name: `${name}-key`,
        userId: user.body.id,
        scope: 'readwrite',
      });
      expect(key.status).toBeLessThan(300);
      return key.body.key as string;
    };
    const [alice, bob] = [await userKey('alice-pub'), await userKey('bob-pub')];
    const as = (key: string) => (method: string, route: string, body?: unknown) =>
      call(method, route, body, key);
    const [A, B] = [as(alice), as(bob)];
    const probe = ['RELEASE', 'RUNPOD_POD_ID'];

    const tpl = await A('POST', '/v1/templates', {
      name: `public-${randomBytes(4).toString('hex')}`,
      imageName: 'runplane-e2e/probe:1',
      isServerless: true,
      isPublic: true,
      dockerStartCmd: [process.execPath, PROBE_WORKER],
      env: { RELEASE: 'v1' },
    });
    expect(tpl.status).toBe(200);
    const endpointOf = async (call: typeof A) => {
      const res = await call('POST', '/v1/endpoints', {
        name: 'public-template',
        templateId: tpl.body.id,
        workersMin: 1,
        workersMax: 1,
      });
      expect(res.status).toBe(200);
      return res.body.id as string;
    };
    const [epA, epB] = [await endpointOf(A), await endpointOf(B)];
    expect((await runJob(epB, { env: probe }, bob)).RELEASE).toBe('v1');
    expect((await runJob(epA, { env: probe }, alice)).RELEASE).toBe('v1');
    const versionOf = async (call: typeof A, ep: string) =>
      (await call('GET', `/v1/endpoints/${ep}`)).body.version as number;
    const bobsVersion = await versionOf(B, epB);

    // Alice changes her template's command and env.
    const update = await A('POST', `/v1/templates/${tpl.body.id}/update`, {
      dockerStartCmd: [process.execPath, PROBE_WORKER, '--v2'],
      env: { RELEASE: 'v2' },
    });
    expect(update.status).toBe(200);
    // Her own endpoint rolls out v2 ...
    await eventually(
      async () => (await runJob(epA, { env: probe }, alice)).RELEASE === 'v2',
      "v2 on alice's endpoint",
      90_000,
    );
    // ... Bob's keeps its version, and every worker it runs, a newly started one too, runs v1.
    expect(await versionOf(B, epB)).toBe(bobsVersion);
    expect((await runJob(epB, { env: probe }, bob)).RELEASE).toBe('v1');
    expect(
      (await B('PATCH', `/v1/endpoints/${epB}`, { workersMin: 2, workersMax: 2 })).status,
    ).toBe(200);
    /** Two jobs held at once (so both workers answer); their outputs. */
    const bothWorkers = async (ep: string, key: string) => {
      const gate = path.join(workDir, `gate-${randomBytes(4).toString('hex')}`);
      const ids = await Promise.all(
        [0, 1].map(
          async () =>
            (
              await call(
                'POST',
                `/v2/${ep}/run`,
                { input: { wait_for_file: gate, env: probe } },
                key,
              )
            ).body.id as string,
        ),
      );
      await eventually(
        async () =>
          (await call('GET', `/v2/${ep}/health`, undefined, key)).body.jobs.inProgress === 2,
        'both workers busy',
        90_000,
      );
      fs.writeFileSync(gate, '');
      return Promise.all(
        ids.map((id) =>
          eventually(async () => {
            const s = (await call('GET', `/v2/${ep}/status/${id}`, undefined, key)).body;
            return s.status === 'COMPLETED' && s.output;
          }, 'held jobs'),
        ),
      );
    };
    const scaled = await bothWorkers(epB, bob);
    expect(scaled.map((o) => o.RELEASE)).toEqual(['v1', 'v1']);
    expect(scaled[0].RUNPOD_POD_ID).not.toBe(scaled[1].RUNPOD_POD_ID);
    expect(await versionOf(B, epB)).toBe(bobsVersion);

    // Bob moves his endpoint on explicitly: the same templateId again.
    const moved = await B('PATCH', `/v1/endpoints/${epB}`, { templateId: tpl.body.id });
    expect(moved.status).toBe(200);
    expect(moved.body.version).toBe(bobsVersion + 1);
    await eventually(
      async () => (await bothWorkers(epB, bob)).every((o) => o.RELEASE === 'v2'),
      "every worker of bob's endpoint on v2",
      120_000,
    );
  }, 300_000);
});
