import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PodRpc,
  RunplaneError,
  SchedulerRpc,
  TemplateRpc,
  VaultRpc,
  type JobEvent,
  type Template,
  type WorkloadLogLine,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { podRestService } from '../src/index.js';
import { waitFor } from './worker-fixture.js';

const OWNER = 'usr_admin'; // the bootstrap admin key's user
const SECRET = 'pw-7Hq$&x-value';
const MAX_LINES = 1000;

/**
 * The workload: prints `LINES` numbered lines, one on stderr, the secret alone and inside a URL,
 * then either waits for SIGTERM (printing "bye" on it) or, with TICK set, prints "tick n" forever.
 */
const SCRIPT = `
process.on('SIGTERM', () => { process.stdout.write('bye\\n'); process.exit(0); });
const n = Number(process.env.LINES || 0);
for (let i = 1; i <= n; i++) process.stdout.write('line ' + i + '\\n');
process.stderr.write('on stderr\\n');
process.stdout.write('secret=' + process.env.PASSWORD + ' url=' + process.env.DB_URL + '\\n');
if (process.env.TICK) { let i = 0; setInterval(() => process.stdout.write('tick ' + i++ + '\\n'), 50); }
else setInterval(() => {}, 1 << 30);
`;

function template(id: string): Template {
  return {
    id,
    name: `tpl-${id}`,
    imageName: 'example/worker:1',
    category: 'CPU',
    containerDiskInGb: 5,
    dockerEntrypoint: [],
    dockerStartCmd: [process.execPath, '-e', SCRIPT],
    earned: 0,
    env: {
      TICK: '1',
      PASSWORD: '{{ RUNPOD_SECRET_pw }}',
      DB_URL: 'postgres://u:{{ RUNPOD_SECRET_pw }}@db',
    },
    isPublic: false,
    isRunpod: false,
    isServerless: true,
    ports: [],
    readme: '',
    runtimeInMin: 0,
    volumeInGb: 0,
    volumeMountPath: '/workspace',
  };
}

describe('workload logs: GET /v1/pods/{id}/logs, the worker and job log routes of endpoints', () => {
  let server: TestServer;
  let bobKey: string;
  const jobEvents = new Map<string, JobEvent[]>();

  const call = (method: string, p: string, body?: unknown, key?: string) =>
    server.call(method, p, body, key ? { authorization: `Bearer ${key}` } : {});
  const createPod = async (env: Record<string, string>) => {
    const res = await call('POST', '/v1/pods', {
      name: 'logger',
      imageName: 'acme/app:1',
      dockerStartCmd: [process.execPath, '-e', SCRIPT],
      env: {
        PASSWORD: '{{ RUNPOD_SECRET_pw }}',
        DB_URL: 'postgres://u:{{ RUNPOD_SECRET_pw }}@db',
        ...env,
      },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const logs = async (p: string, key?: string) => {
    const res = await call('GET', p, undefined, key);
    expect(res.status).toBe(200);
    return res.body as WorkloadLogLine[];
  };
  const startWorker = (workerId: string) =>
    server.bus.request(PodRpc.startWorker, {
      ownerId: OWNER,
      workerId,
      endpointId: 'ep-logs',
      templateId: 'tpl-ticks',
      slsVersion: 1,
      env: { RUNPOD_POD_ID: workerId, RUNPOD_AI_API_KEY: `worker-key-of-${workerId}` },
      gpuTypeId: 'cpu',
    });

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, podRestService], {
      RUNPLANE_LOG_MAX_LINES: String(MAX_LINES),
    });
    // Stand-ins for template-graphql (templates) and the scheduler (a job's history).
    await server.bus.serve(TemplateRpc.get, async ({ templateId }) => template(templateId));
    await server.bus.serve(SchedulerRpc.jobEvents, async ({ ownerId, endpointId, jobId }) => {
      const events = jobEvents.get(jobId);
      if (!events || ownerId !== OWNER || endpointId !== 'ep-logs')
        throw RunplaneError.notFound(`job ${jobId} not found`, 'JOB_NOT_FOUND');
      return events;
    });
    await server.bus.request(VaultRpc.createSecret, {
      ownerId: OWNER,
      secret: { name: 'pw', value: SECRET },
    });
    const bob = await call('POST', '/v1/users', { name: 'bob' });
    bobKey = (
      await call('POST', '/v1/apikeys', { name: 'bob', userId: bob.body.id, scope: 'readwrite' })
    ).body.key;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("keeps a Pod's stdout and stderr lines in the database, its resolved secrets replaced by [secret]; tail and since", async () => {
    const podId = await createPod({ LINES: '3' });
    const lines = await waitFor(async () => {
      const got = await logs(`/v1/pods/${podId}/logs`);
      return got.length === 5 ? got : undefined;
    }, 'the five lines');
    // stdout in order; stderr is another pipe, so its place among them is not fixed.
    expect(lines.filter((l) => l.stream === 'stdout').map((l) => l.text)).toEqual([
      'line 1',
      'line 2',
      'line 3',
      'secret=[secret] url=[secret]',
    ]);
    expect(lines.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual(['on stderr']);
    for (const l of lines) expect(new Date(l.at).toISOString()).toBe(l.at);
    // Nowhere at rest either.
    const db = server.app.get(PrismaClient, { strict: false });
    const stored = await db.workloadLogLine.findMany({ where: { podId } });
    expect(stored).toHaveLength(5);
    expect(stored.map((l) => l.text).join('\n')).not.toContain(SECRET);

    expect(await logs(`/v1/pods/${podId}/logs?tail=2`)).toEqual(lines.slice(3));
    expect(await logs(`/v1/pods/${podId}/logs?since=3600`)).toEqual(lines);
    expect(await logs(`/v1/pods/${podId}/logs?since=${lines[3].at}`)).toEqual(
      lines.filter((l) => l.at >= lines[3].at),
    );
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await logs(`/v1/pods/${podId}/logs?since=${future}`)).toEqual([]);
  });

  it('keeps at most RUNPLANE_LOG_MAX_LINES lines per Pod: the oldest go first, down to nine tenths', async () => {
    const podId = await createPod({ LINES: String(MAX_LINES * 3) });
    // The last stdout line marks the end (stderr is another pipe: where its line lands, and so
    // whether it is among the newest kept, is not fixed).
    const kept = await waitFor(
      async () => {
        const got = await logs(`/v1/pods/${podId}/logs`);
        return got.some((l) => l.text.startsWith('secret=')) ? got : undefined;
      },
      'the last lines',
      60_000,
    );
    // A Pod over its bound is cut back to nine tenths of it.
    expect(kept.length).toBeLessThanOrEqual(MAX_LINES);
    expect(kept.length).toBeGreaterThanOrEqual(MAX_LINES * 0.9);
    // The newest numbered lines, without a gap, up to the last one.
    const numbers = kept
      .filter((l) => l.text.startsWith('line '))
      .map((l) => Number(l.text.slice(5)));
    expect(numbers.length).toBeGreaterThanOrEqual(MAX_LINES * 0.9 - 2);
    expect(numbers.at(-1)).toBe(MAX_LINES * 3);
    numbers.forEach((n, i) => expect(n).toBe(numbers[0] + i));
  }, 90_000);

  it('keeps the bound as the lines keep coming: a Pod over it is trimmed again', async () => {
    const podId = await createPod({ LINES: String(MAX_LINES), TICK: '1' });
    // Trimmed to nine tenths once the first lines are in, then over the bound again after a
    // tenth of it in ticks (one every 50 ms).
    const later = await waitFor(
      async () => {
        const got = await logs(`/v1/pods/${podId}/logs`);
        // A read may fall between a batch's insert and its trim: wait for one after a trim.
        const ticks = got.filter((l) => l.text.startsWith('tick ')).length;
        return ticks >= MAX_LINES * 0.1 + 20 && got.length <= MAX_LINES ? got : undefined;
      },
      'ticks after the numbered lines, the Pod back at its bound',
      60_000,
    );
    expect(later.at(-1)!.text).toMatch(/^tick \d+$/);
  }, 90_000);

  it('refuses a bad tail, since or follow with a 400 naming the field', async () => {
    const podId = await createPod({});
    for (const [query, field] of [
      ['tail=0', 'tail'],
      ['tail=abc', 'tail'],
      ['tail=10001', 'tail'],
      ['since=yesterday', 'since'],
      ['since=2026-13-45T99:00:00Z', 'since'],
      ['follow=maybe', 'follow'],
    ]) {
      const res = await call('GET', `/v1/pods/${podId}/logs?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    const noJob = await call('GET', '/v1/endpoints/ep-logs/logs');
    expect(noJob.status).toBe(400);
    expect(JSON.stringify(noJob.body)).toContain('jobId');
  });

  it('follow=true streams server-sent events: the lines so far, new ones as they come, and ends once the Pod stopped', async () => {
    const podId = await createPod({ LINES: '2' });
    const res = await fetch(`${server.url}/v1/pods/${podId}/logs?follow=true`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const events = () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => (JSON.parse(l.slice(6)) as WorkloadLogLine).text);
    const readUntil = async (done: () => boolean) => {
      while (!done()) {
        const chunk = await reader.read();
        if (chunk.done) return true;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return false;
    };
    await readUntil(
      () => events().includes('secret=[secret] url=[secret]') && events().includes('on stderr'),
    );
    // Stopped: it prints "bye" on SIGTERM; the stream carries it, then ends by itself.
    expect((await call('POST', `/v1/pods/${podId}/stop`)).status).toBe(200);
    expect(await readUntil(() => false)).toBe(true);
    expect(events().filter((t) => t !== 'on stderr')).toEqual([
      'line 1',
      'line 2',
      'secret=[secret] url=[secret]',
      'bye',
    ]);
    expect(events()).toContain('on stderr');
    expect(text).not.toContain(SECRET);
  });

  it("another user's Pod, worker or job is 404", async () => {
    const podId = await createPod({});
    expect((await call('GET', `/v1/pods/${podId}/logs`, undefined, bobKey)).status).toBe(404);
    expect(
      (await call('GET', `/v1/pods/${podId}/logs?follow=true`, undefined, bobKey)).status,
    ).toBe(404);
    await startWorker('wk-private');
    expect(
      (await call('GET', '/v1/endpoints/ep-logs/workers/wk-private/logs', undefined, bobKey))
        .status,
    ).toBe(404);
    // The owner's worker under another endpoint id, and a Pod that is no worker, are 404 too.
    expect((await call('GET', '/v1/endpoints/ep-other/workers/wk-private/logs')).status).toBe(404);
    expect((await call('GET', `/v1/endpoints/ep-logs/workers/${podId}/logs`)).status).toBe(404);
    jobEvents.set('job-private', []);
    expect(
      (await call('GET', '/v1/endpoints/ep-logs/logs?jobId=job-private', undefined, bobKey)).status,
    ).toBe(404);
  });

  it("a worker's logs by its worker id; a job's logs are its workers' lines while they held it", async () => {
    await startWorker('wk-a');
    await startWorker('wk-b');
    const ticks = async (workerId: string) => {
      const lines = await logs(`/v1/endpoints/ep-logs/workers/${workerId}/logs`);
      return lines.filter((l) => l.text.startsWith('tick '));
    };
    const a = await waitFor(async () => {
      const t = await ticks('wk-a');
      return t.length >= 40 ? t : undefined;
    }, 'ticks of wk-a');
    const b = await waitFor(async () => {
      const t = await ticks('wk-b');
      return t.length >= 40 ? t : undefined;
    }, 'ticks of wk-b');
    const worker = await logs('/v1/endpoints/ep-logs/workers/wk-a/logs');
    expect(worker).toContainEqual({
      at: expect.any(String),
      stream: 'stdout',
      text: 'secret=[secret] url=[secret]',
    });
    // Taken by wk-a, requeued, taken by wk-b, completed (the times are some of their lines').
    const holds = [
      { workerId: 'wk-a', from: a[5].at, to: a[15].at },
      { workerId: 'wk-b', from: b[20].at, to: b[30].at },
    ];
    jobEvents.set('job-1', [
      { at: a[2].at, type: 'SUBMITTED', workerId: null, detail: null },
      { at: holds[0].from, type: 'TAKEN', workerId: 'wk-a', detail: null },
      { at: holds[0].to, type: 'REQUEUED', workerId: 'wk-a', detail: 'missed pings' },
      { at: holds[1].from, type: 'TAKEN', workerId: 'wk-b', detail: null },
      { at: holds[1].to, type: 'COMPLETED', workerId: 'wk-b', detail: null },
    ]);
    const expected = [
      ...(await logs('/v1/endpoints/ep-logs/workers/wk-a/logs')).filter(
        (l) => l.at >= holds[0].from && l.at <= holds[0].to,
      ),
      ...(await logs('/v1/endpoints/ep-logs/workers/wk-b/logs')).filter(
        (l) => l.at >= holds[1].from && l.at <= holds[1].to,
      ),
    ];
    const job = await logs('/v1/endpoints/ep-logs/logs?jobId=job-1');
    const key = (l: WorkloadLogLine) => `${l.at} ${l.text}`;
    expect(job.map(key).sort()).toEqual(expected.map(key).sort());
    // In time order; lines of one millisecond keep the order they were written in, not the text's.
    expect(job.map((l) => l.at)).toEqual(job.map((l) => l.at).sort());
    expect(job.map((l) => l.text)).toEqual(
      expect.arrayContaining(['tick 5', 'tick 15', 'tick 20', 'tick 30']),
    );
    // Lines of the workers outside their holds are not the job's.
    expect(job.length).toBeLessThan(a.length + b.length);
    expect((await call('GET', '/v1/endpoints/ep-logs/logs?jobId=unknown')).status).toBe(404);
  });
});
