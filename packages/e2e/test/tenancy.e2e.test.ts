import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  ADMIN_KEY,
  CLI,
  http,
  killAll,
  removeTempDir,
  sleep,
  startRunplane,
  tempDir,
  type HttpResult,
} from './support/runplane-process.js';

const run = promisify(execFile);

/**
 * Tenancy through the public interfaces: users and keys made with the `runplane` CLI, then every
 * resource of user A (endpoint, job, template, secret, API key, webhook deliveries, Pod) tried through
 * every route that names it, with user B's key. All of it must be denied (404 or absent from B's
 * lists, GraphQL NOT_FOUND), and A's resources must be untouched afterwards.
 */
describe("tenancy: another user's resources are invisible", () => {
  const workDir = tempDir('tenancy');
  let url: string;
  let keyA: string;
  let keyB: string;
  let keyIdA: string;
  const a: Record<string, string> = {};

  async function cli(args: string[], key = ADMIN_KEY): Promise<string> {
    const { stdout } = await run(process.execPath, [CLI, ...args, '--json'], {
      env: { ...process.env, RUNPLANE_URL: url, RUNPLANE_API_KEY: key },
      timeout: 30_000,
    });
    return stdout;
  }

  const gql = (query: string, key: string) =>
    http('POST', `${url}/graphql`, { key: `Bearer ${key}`, body: { query } });

  beforeAll(async () => {
    const server = startRunplane(
      'tenancy',
      ['start'],
      { RUNPLANE_DATA_DIR: path.join(workDir, 'data'), RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;

    // Two users with a readwrite key each, through the CLI.
    for (const [name, set] of [
      [
        'alice',
        (k: string, id: string) => {
          keyA = k;
          keyIdA = id;
        },
      ],
      [
        'bob',
        (k: string) => {
          keyB = k;
        },
      ],
    ] as const) {
      const user = JSON.parse(await cli(['users', 'create', '--name', name]));
      const key = JSON.parse(
        await cli([
          'keys',
          'create',
          '--name',
          `${name}-key`,
          '--user',
          user.id,
          '--scope',
          'readwrite',
        ]),
      );
      expect(key).toMatchObject({
        userId: user.id,
        scope: 'readwrite',
        key: expect.stringMatching(/^rpk_/),
      });
      set(key.key, key.id);
    }

    // Alice's resources.
    const A = `Bearer ${keyA}`;
    const tpl = await http('POST', `${url}/v1/templates`, {
      key: A,
      body: { name: 'alice-private', imageName: 'alice/app:1', isServerless: true },
    });
    const ep = await http('POST', `${url}/v1/endpoints`, {
      key: A,
      body: { name: 'alice-ep', templateId: tpl.body.id, workersMax: 0 },
    });
    const job = await http('POST', `${url}/v2/${ep.body.id}/run`, {
      key: A,
      body: { input: { secret: 'alice' }, webhook: 'http://127.0.0.1:9/hook' },
    });
    const secret = await gql(
      'mutation { secretCreate(input: {name: "alice_token", value: "s3cr3t-alice"}) { id name } }',
      keyA,
    );
    // A Pod running a harmless process (the server stops it when it shuts down).
    const pod = await http('POST', `${url}/v1/pods`, {
      key: A,
      body: {
        name: 'alice-pod',
        imageName: 'alice/pod:1',
        dockerStartCmd: [process.execPath, '-e', 'setInterval(() => {}, 1 << 30)'],
      },
    });
    expect([tpl.status, ep.status, job.status, secret.status, pod.status]).toEqual([
      200, 200, 200, 200, 201,
    ]);
    Object.assign(a, {
      tpl: tpl.body.id,
      tplName: 'alice-private',
      ep: ep.body.id,
      job: job.body.id,
      secret: secret.body.data.secretCreate.id,
      pod: pod.body.id,
    });
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('denies every route on every resource of user A to user B (100 %)', async () => {
    const B = `Bearer ${keyB}`;
    const denied: string[] = [];
    const allowed: string[] = [];
    const expect404 = async (label: string, res: Promise<HttpResult>) => {
      const r = await res;
      (r.status === 404 ? denied : allowed).push(`${label} -> ${r.status} ${r.text.slice(0, 120)}`);
    };
    const expectAbsent = async (label: string, res: Promise<HttpResult>, id: string) => {
      const r = await res;
      (r.status === 200 && !r.text.includes(id) ? denied : allowed).push(
        `${label} -> ${r.status} ${r.text.slice(0, 120)}`,
      );
    };
    const expectGqlNotFound = async (label: string, query: string) => {
      const r = await gql(query, keyB);
      const code = r.body?.errors?.[0]?.extensions?.code;
      (code === 'NOT_FOUND' ? denied : allowed).push(
        `${label} -> ${r.status} ${r.text.slice(0, 160)}`,
      );
    };

    const q = `${url}/v2/${a.ep}`;
    // Queue API, every operation, both methods where both exist.
    await expect404('POST /run', http('POST', `${q}/run`, { key: B, body: { input: {} } }));
    await expect404(
      'POST /runsync',
      http('POST', `${q}/runsync?wait=1000`, { key: B, body: { input: {} } }),
    );
    for (const method of ['GET', 'POST']) {
      await expect404(`${method} /status`, http(method, `${q}/status/${a.job}`, { key: B }));
      await expect404(
        `${method} /status?ttl`,
        http(method, `${q}/status/${a.job}?ttl=10000`, { key: B }),
      );
      await expect404(
        `${method} /status-sync`,
        http(method, `${q}/status-sync/${a.job}?wait=1000`, { key: B }),
      );
      await expect404(
        `${method} /stream`,
        http(method, `${q}/stream/${a.job}?wait=1000`, { key: B }),
      );
    }
    await expect404('POST /cancel', http('POST', `${q}/cancel/${a.job}`, { key: B }));
    await expect404('POST /retry', http('POST', `${q}/retry/${a.job}`, { key: B }));
    await expect404('POST /purge-queue', http('POST', `${q}/purge-queue`, { key: B }));
    await expect404('GET /health', http('GET', `${q}/health`, { key: B }));
    await expect404('GET /requests', http('GET', `${q}/requests`, { key: B }));
    await expect404('GET /openai/v1/models', http('GET', `${q}/openai/v1/models`, { key: B }));
    await expect404(
      'POST /openai/v1/chat/completions',
      http('POST', `${q}/openai/v1/chat/completions`, {
        key: B,
        body: { model: 'x', messages: [] },
      }),
    );
    // Worker protocol (a readwrite key may act as a worker of its own endpoints only).
    await expect404('GET /job-take', http('GET', `${q}/job-take/bob-worker`, { key: B }));
    await expect404(
      'GET /job-take-batch',
      http('GET', `${q}/job-take-batch/bob-worker?batch_size=2`, { key: B }),
    );
    await expect404(
      'POST /job-done',
      http('POST', `${q}/job-done/bob-worker/${a.job}`, { key: B, body: { output: 'hijacked' } }),
    );
    await expect404(
      'POST /job-stream',
      http('POST', `${q}/job-stream/bob-worker/${a.job}`, { key: B, body: { output: 'x' } }),
    );
    await expect404('GET /ping', http('GET', `${q}/ping/bob-worker`, { key: B }));
    await expect404('GET /job-stop', http('GET', `${q}/job-stop/bob-worker`, { key: B }));
    // REST: endpoints, templates, keys, webhook deliveries.
    await expect404(
      'GET /v1/endpoints/{id}',
      http('GET', `${url}/v1/endpoints/${a.ep}`, { key: B }),
    );
    await expect404(
      'PATCH /v1/endpoints/{id}',
      http('PATCH', `${url}/v1/endpoints/${a.ep}`, { key: B, body: { workersMax: 1 } }),
    );
    await expect404(
      'POST /v1/endpoints/{id}/update',
      http('POST', `${url}/v1/endpoints/${a.ep}/update`, { key: B, body: { workersMax: 1 } }),
    );
    await expect404(
      'DELETE /v1/endpoints/{id}',
      http('DELETE', `${url}/v1/endpoints/${a.ep}`, { key: B }),
    );
    await expect404(
      'GET /v1/templates/{id}',
      http('GET', `${url}/v1/templates/${a.tpl}`, { key: B }),
    );
    await expect404(
      'PATCH /v1/templates/{id}',
      http('PATCH', `${url}/v1/templates/${a.tpl}`, { key: B, body: { readme: 'x' } }),
    );
    await expect404(
      'POST /v1/templates/{id}/update',
      http('POST', `${url}/v1/templates/${a.tpl}/update`, { key: B, body: { readme: 'x' } }),
    );
    await expect404(
      'DELETE /v1/templates/{id}',
      http('DELETE', `${url}/v1/templates/${a.tpl}`, { key: B }),
    );
    await expect404(
      'GET /v1/pods/{id}',
      http('GET', `${url}/v1/pods/${a.pod}?includeMachine=true&includeWorkers=true`, { key: B }),
    );
    await expect404(
      'PATCH /v1/pods/{id}',
      http('PATCH', `${url}/v1/pods/${a.pod}`, { key: B, body: { name: 'hijack', locked: true } }),
    );
    await expect404(
      'POST /v1/pods/{id}/update',
      http('POST', `${url}/v1/pods/${a.pod}/update`, { key: B, body: { env: { X: '1' } } }),
    );
    for (const action of ['start', 'stop', 'restart', 'reset']) {
      await expect404(
        `POST /v1/pods/{id}/${action}`,
        http('POST', `${url}/v1/pods/${a.pod}/${action}`, { key: B }),
      );
    }
    await expect404('DELETE /v1/pods/{id}', http('DELETE', `${url}/v1/pods/${a.pod}`, { key: B }));
    // A reference in a body is refused exactly like an id that does not exist (no existence leak).
    const steal = await http('POST', `${url}/v1/endpoints`, {
      key: B,
      body: { name: 'steal', templateId: a.tpl },
    });
    const none = await http('POST', `${url}/v1/endpoints`, {
      key: B,
      body: { name: 'steal', templateId: 'tpl-does-not-exist' },
    });
    const same =
      steal.status === none.status &&
      steal.status >= 400 &&
      steal.status < 500 &&
      steal.body.message === none.body.message.replace('tpl-does-not-exist', a.tpl);
    (same ? denied : allowed).push(
      `POST /v1/endpoints on A's private template -> ${steal.status} ${steal.text.slice(0, 120)} (unknown id: ${none.status})`,
    );
    await expect404(
      'DELETE /v1/apikeys/{id}',
      http('DELETE', `${url}/v1/apikeys/${keyIdA}`, { key: B }),
    );
    await expect404(
      "POST /v1/apikeys worker key for A's endpoint",
      http('POST', `${url}/v1/apikeys`, {
        key: B,
        body: { name: 'w', scope: 'worker', endpointId: a.ep },
      }),
    );
    await expectAbsent(
      'GET /v1/webhooks/deliveries?jobId=',
      http('GET', `${url}/v1/webhooks/deliveries?jobId=${a.job}`, { key: B }),
      a.job,
    );
    await expectAbsent('GET /v1/endpoints', http('GET', `${url}/v1/endpoints`, { key: B }), a.ep);
    await expectAbsent('GET /v1/templates', http('GET', `${url}/v1/templates`, { key: B }), a.tpl);
    await expectAbsent('GET /v1/apikeys', http('GET', `${url}/v1/apikeys`, { key: B }), keyIdA);
    await expectAbsent(
      'GET /v1/pods',
      http('GET', `${url}/v1/pods?includeWorkers=true`, { key: B }),
      a.pod,
    );
    // GraphQL.
    await expectGqlNotFound(
      "deleteTemplate(A's name)",
      `mutation { deleteTemplate(templateName: "${a.tplName}") }`,
    );
    await expectGqlNotFound(
      "saveTemplate(id: A's)",
      `mutation { saveTemplate(input: {id: "${a.tpl}", name: "hijack", imageName: "x:1", containerDiskInGb: 1, volumeInGb: 0}) { id } }`,
    );
    await expectGqlNotFound("secretDelete(A's id)", `mutation { secretDelete(id: "${a.secret}") }`);
    const podTemplate = await gql(`query { podTemplate(id: "${a.tpl}") { id name } }`, keyB);
    (podTemplate.body?.data?.podTemplate == null ? denied : allowed).push(
      `podTemplate(A's id) -> ${podTemplate.text.slice(0, 120)}`,
    );
    const myself = await gql('query { myself { podTemplates { id } secrets { id } } }', keyB);
    (myself.status === 200 && !myself.text.includes(a.tpl) && !myself.text.includes(a.secret)
      ? denied
      : allowed
    ).push(`myself lists -> ${myself.text.slice(0, 120)}`);

    process.stderr.write(`[tenancy] ${denied.length} denied, ${allowed.length} allowed\n`);
    expect(allowed).toEqual([]);
    expect(denied.length).toBe(52); // every check above ran
  }, 120_000);

  it("left user A's resources untouched", async () => {
    const A = `Bearer ${keyA}`;
    expect((await http('GET', `${url}/v2/${a.ep}/status/${a.job}`, { key: A })).body).toMatchObject(
      { id: a.job, status: 'IN_QUEUE' },
    );
    expect((await http('GET', `${url}/v1/endpoints/${a.ep}`, { key: A })).body).toMatchObject({
      id: a.ep,
      workersMax: 0,
    });
    expect((await http('GET', `${url}/v1/templates/${a.tpl}`, { key: A })).body).toMatchObject({
      id: a.tpl,
      name: 'alice-private',
      readme: '',
    });
    expect((await http('GET', `${url}/v1/pods/${a.pod}`, { key: A })).body).toMatchObject({
      id: a.pod,
      name: 'alice-pod',
      desiredStatus: 'RUNNING',
      locked: false,
      env: {},
    });
    const secrets = await gql('query { myself { secrets { id name } } }', keyA);
    expect(secrets.body.data.myself.secrets).toEqual([{ id: a.secret, name: 'alice_token' }]);
    expect(JSON.parse(await cli(['keys', 'list'], keyA)).map((k: { id: string }) => k.id)).toEqual([
      keyIdA,
    ]);
  });

  it('a public template is readable by every user', async () => {
    const pub = await http('POST', `${url}/v1/templates`, {
      key: `Bearer ${keyA}`,
      body: { name: 'alice-public', imageName: 'alice/pub:1', isPublic: true },
    });
    expect(pub.status).toBe(200);
    const seen = await http('GET', `${url}/v1/templates/${pub.body.id}`, { key: `Bearer ${keyB}` });
    expect(seen).toMatchObject({ status: 200, body: { id: pub.body.id, isPublic: true } });
    // ...but not writable by them.
    expect(
      (
        await http('POST', `${url}/v1/templates/${pub.body.id}/update`, {
          key: `Bearer ${keyB}`,
          body: { readme: 'x' },
        })
      ).status,
    ).toBe(404);
  });

  it('a key revoked with the CLI is refused within 5 s', async () => {
    const created = JSON.parse(
      await cli(['keys', 'create', '--name', 'short-lived', '--scope', 'readonly'], keyA),
    );
    expect(
      (await http('GET', `${url}/v1/endpoints`, { key: `Bearer ${created.key}` })).status,
    ).toBe(200);
    expect(JSON.parse(await cli(['keys', 'revoke', created.id], keyA))).toEqual({
      id: created.id,
      revoked: true,
    });
    const deadline = Date.now() + 5000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await http('GET', `${url}/v1/endpoints`, { key: `Bearer ${created.key}` })).status;
      if (status === 401) break;
      await sleep(200);
    }
    expect(status).toBe(401);
  });
});
