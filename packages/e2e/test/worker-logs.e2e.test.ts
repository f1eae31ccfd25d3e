import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
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

interface Line {
  at: string;
  stream: string;
  text: string;
}

/**
 * Worker logs end to end on a standalone server (the real CLI) with a real managed worker
 * (support/probe-worker.mjs): what it prints is served by the worker and Pod log routes, with its
 * resolved secret replaced, followed as server-sent events, hidden from another user, and still
 * there after the server restarted on the same data directory.
 */
describe('worker logs (standalone)', () => {
  const workDir = tempDir('worker-logs');
  const dataDir = path.join(workDir, 'data');
  const secret = `e2e-log-secret-${randomBytes(12).toString('hex')}`;
  let server: RunplaneProcess;
  let url: string;
  let endpointId: string;
  let workerId: string;
  let bobKey: string;

  const call = (method: string, route: string, body?: unknown, key = ADMIN_KEY) =>
    http(method, `${url}${route}`, { key: `Bearer ${key}`, body });
  const start = async (name: string) => {
    server = startRunplane(
      name,
      ['start'],
      { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_API_KEY: ADMIN_KEY },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
  };
  const workerLogs = async (query = '') => {
    const res = await call('GET', `/v1/endpoints/${endpointId}/workers/${workerId}/logs${query}`);
    expect(res.status).toBe(200);
    return res.body as Line[];
  };

  beforeAll(async () => {
    await start('worker-logs');
    const gql = await http('POST', `${url}/graphql?api_key=${ADMIN_KEY}`, {
      body: {
        query: `mutation { secretCreate(input: {name: "log_token", value: "${secret}"}) { id } }`,
      },
    });
    expect(gql.status).toBe(200);
    const template = await call('POST', '/v1/templates', {
      name: `e2e-logs-${randomBytes(4).toString('hex')}`,
      imageName: 'runplane-e2e/probe:1',
      isServerless: true,
      dockerStartCmd: [process.execPath, PROBE_WORKER],
      env: { TOKEN: '{{ RUNPOD_SECRET_log_token }}' },
    });
    expect(template.status).toBe(200);
    const endpoint = await call('POST', '/v1/endpoints', {
      name: 'e2e-logs',
      templateId: template.body.id,
      workersMin: 1,
      workersMax: 1,
    });
    expect(endpoint.status).toBe(200);
    endpointId = endpoint.body.id;
    const bob = await call('POST', '/v1/users', { name: 'bob' });
    bobKey = (
      await call('POST', '/v1/apikeys', { name: 'bob', userId: bob.body.id, scope: 'readwrite' })
    ).body.key;
  }, 120_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it("serves what the worker printed, its secret replaced by [secret]; tail; another user's worker is 404", async () => {
    const job = await call('POST', `/v2/${endpointId}/run`, {
      input: { log: ['hello from the job'], log_env: ['TOKEN'], env: [] },
    });
    const done = await eventually(async () => {
      const s = (await call('GET', `/v2/${endpointId}/status/${job.body.id}`)).body;
      return ['COMPLETED', 'FAILED'].includes(s.status) && s;
    }, 'the job to finish');
    expect(done.status).toBe('COMPLETED');
    const workers = await call('GET', `/v1/pods?endpointId=${endpointId}`);
    workerId = workers.body[0].id;

    const lines = await eventually(async () => {
      const got = await workerLogs();
      return got.some((l) => l.text === 'TOKEN=[secret]') && got;
    }, 'the lines of the job');
    expect(lines).toContainEqual({
      at: expect.any(String),
      stream: 'stdout',
      text: 'hello from the job',
    });
    expect(JSON.stringify(lines)).not.toContain(secret);
    // The worker keeps writing (its SDK logs too): compare with what was there when asked.
    const last = await workerLogs('?tail=1');
    expect(last).toHaveLength(1);
    expect(await workerLogs()).toContainEqual(last[0]);
    // The same lines as the worker's Pod.
    const podLines = (await call('GET', `/v1/pods/${workerId}/logs`)).body as Line[];
    expect(podLines.slice(0, lines.length)).toEqual(lines);

    for (const route of [
      `/v1/endpoints/${endpointId}/workers/${workerId}/logs`,
      `/v1/pods/${workerId}/logs`,
    ])
      expect((await call('GET', route, undefined, bobKey)).status).toBe(404);
  });

  it("a job's logs: only the lines its worker wrote while it held that job; another user's job is 404", async () => {
    const run = async (marker: string) => {
      const job = await call('POST', `/v2/${endpointId}/run`, { input: { log: [marker] } });
      await eventually(async () => {
        const s = (await call('GET', `/v2/${endpointId}/status/${job.body.id}`)).body;
        return s.status === 'COMPLETED';
      }, `job ${marker} to complete`);
      return job.body.id as string;
    };
    const first = await run('first job line');
    const second = await run('second job line');
    const ofJob = async (jobId: string) => {
      const res = await call('GET', `/v1/endpoints/${endpointId}/logs?jobId=${jobId}`);
      expect(res.status).toBe(200);
      return (res.body as Line[]).map((l) => l.text);
    };
    // Lines are stored in batches: wait until the second job's line is there.
    await eventually(async () => (await ofJob(second)).includes('second job line'), 'the lines');
    expect(await ofJob(second)).not.toContain('first job line');
    expect(await ofJob(first)).toContain('first job line');
    expect(await ofJob(first)).not.toContain('second job line');
    const foreign = await call(
      'GET',
      `/v1/endpoints/${endpointId}/logs?jobId=${first}`,
      undefined,
      bobKey,
    );
    expect(foreign.status).toBe(404);
  });

  it('follow=true sends the lines as server-sent events while the worker runs; the client may leave', async () => {
    const res = await fetch(
      `${url}/v1/endpoints/${endpointId}/workers/${workerId}/logs?follow=true`,
      { headers: { authorization: `Bearer ${ADMIN_KEY}` } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const texts = () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => (JSON.parse(l.slice(6)) as Line).text);
    // A new line while following.
    await call('POST', `/v2/${endpointId}/run`, { input: { log: ['second job'], env: [] } });
    while (!texts().includes('second job')) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the stream ended early: ${text}`);
      text += decoder.decode(chunk.value, { stream: true });
    }
    expect(texts()).toEqual(expect.arrayContaining(['hello from the job', 'TOKEN=[secret]']));
    expect(text).not.toContain(secret);
    await reader.cancel();
  });

  it('the lines are still there after the server restarted on the same data directory', async () => {
    const before = await workerLogs();
    expect(before.map((l) => l.text)).toEqual(expect.arrayContaining(['second job']));
    await server.stopGroup();
    await start('worker-logs-restarted');
    const after = await workerLogs();
    // The old worker's lines, kept; it ended with the server (its last words may add lines).
    expect(after.slice(0, before.length)).toEqual(before);
    expect(JSON.stringify(after)).not.toContain(secret);
  });
});
