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
} from './support/runplane-process.js';

const PROBE_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'support/probe-worker.mjs',
);
const FINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/**
 * A job's history (`GET /v1/endpoints/{id}/jobs/{jobId}/events`) and bounded requeues, through the
 * public APIs of a standalone server with a real managed worker (support/probe-worker.mjs).
 */
describe('job history and bounded requeues (standalone)', () => {
  const workDir = tempDir('job-history');
  let url: string;
  let ep: string;

  const call = async (method: string, route: string, body?: unknown, key = ADMIN_KEY) =>
    http(method, `${url}${route}`, { key: `Bearer ${key}`, body });
  const submit = async (input: unknown) =>
    (await call('POST', `/v2/${ep}/run`, { input })).body.id as string;
  const status = async (id: string) => (await call('GET', `/v2/${ep}/status/${id}`)).body;
  const ended = (id: string) =>
    eventually(async () => {
      const s = await status(id);
      return FINAL.includes(s.status) && s;
    }, `job ${id} to end`);
  const events = async (id: string) => {
    const res = await call('GET', `/v1/endpoints/${ep}/jobs/${id}/events`);
    expect(res.status).toBe(200);
    return res.body as Array<{
      at: string;
      type: string;
      workerId: string | null;
      detail: string | null;
    }>;
  };
  const types = async (id: string) => (await events(id)).map((e) => e.type);

  beforeAll(async () => {
    const server = startRunplane(
      'job-history',
      ['start'],
      {
        RUNPLANE_DATA_DIR: path.join(workDir, 'data'),
        RUNPLANE_API_KEY: ADMIN_KEY,
        RUNPLANE_JOB_MAX_ATTEMPTS: '2',
      },
      workDir,
    );
    url = (await server.waitForReady(60_000)).url;
    const template = await call('POST', '/v1/templates', {
      name: `e2e-${randomBytes(4).toString('hex')}`,
      imageName: 'runplane-e2e/probe:1',
      isServerless: true,
      dockerStartCmd: [process.execPath, PROBE_WORKER],
    });
    expect(template.status).toBe(200);
    const endpoint = await call('POST', '/v1/endpoints', {
      name: 'e2e-history',
      templateId: template.body.id,
      workersMin: 1,
      workersMax: 1,
    });
    expect(endpoint.status).toBe(200);
    ep = endpoint.body.id;
  }, 90_000);

  afterAll(async () => {
    await killAll();
    removeTempDir(workDir);
  }, 30_000);

  it('a completed job: SUBMITTED, TAKEN by its worker, COMPLETED, oldest first, without its input or output', async () => {
    const id = await submit({ env: ['PATH'] });
    expect((await ended(id)).status).toBe('COMPLETED');
    const list = await events(id);
    expect(list.map((e) => e.type)).toEqual(['SUBMITTED', 'TAKEN', 'COMPLETED']);
    const worker = list[1].workerId;
    expect(worker).toEqual(expect.any(String));
    expect(list[2].workerId).toBe(worker);
    expect(list[0]).toEqual({
      at: expect.any(String),
      type: 'SUBMITTED',
      workerId: null,
      detail: null,
    });
    expect(JSON.stringify(list)).not.toContain('PATH');
  });

  it('a cancelled running job: STOP_SENT to its worker, then CANCELLED', async () => {
    const id = await submit({ wait_for_file: path.join(workDir, 'never') });
    await eventually(async () => (await status(id)).status === 'IN_PROGRESS', 'the job to run');
    expect((await call('POST', `/v2/${ep}/cancel/${id}`)).status).toBe(200);
    const list = await events(id);
    expect(list.map((e) => e.type)).toEqual(['SUBMITTED', 'TAKEN', 'STOP_SENT', 'CANCELLED']);
    expect(list[2]).toMatchObject({ workerId: list[1].workerId, detail: 'cancelled' });
  });

  it('a job whose worker exits while running it: requeued once, then FAILED saying so at RUNPLANE_JOB_MAX_ATTEMPTS=2; a retry is recorded', async () => {
    const id = await submit({ exit: 1 });
    const failed = await ended(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(
      /^the job's worker was lost 2 times while running it \(RUNPLANE_JOB_MAX_ATTEMPTS=2\); last: worker exited \(exit code 1\)$/,
    );
    const list = await events(id);
    expect(list.map((e) => e.type)).toEqual(['SUBMITTED', 'TAKEN', 'REQUEUED', 'TAKEN', 'FAILED']);
    expect(list[2].detail).toBe('worker exited (exit code 1)');
    expect(list[4].detail).toBe(failed.error);

    expect((await call('POST', `/v2/${ep}/retry/${id}`)).status).toBe(200);
    expect(await types(id)).toContain('RETRIED');
    await call('POST', `/v2/${ep}/cancel/${id}`);
  }, 120_000);

  it("another user's or an unknown job: 404", async () => {
    const id = await submit({ env: [] });
    const user = await call('POST', '/v1/users', { name: 'history-other' });
    const key = await call('POST', '/v1/apikeys', {
      name: 'history-other-key',
      userId: user.body.id,
      scope: 'readwrite',
    });
    const other = await call(
      'GET',
      `/v1/endpoints/${ep}/jobs/${id}/events`,
      undefined,
      key.body.key,
    );
    expect(other.status).toBe(404);
    expect((await call('GET', `/v1/endpoints/${ep}/jobs/nope/events`)).status).toBe(404);
  });
});
