import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import {
  JOB_LIMITS,
  QueueApiSignals,
  RunplaneError,
  VaultRpc,
  WORKER_LONG_POLL_MS,
  type JobRecord,
  type StreamResponse,
  type WorkerJob,
  type WorkerPollsEndedSignal,
} from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { queueApiService } from '../src/index.js';
import { ReplicaRegistry } from '../src/limits/replica-registry.js';
import { rawRequest } from './support/raw-http.js';
import { deferred, SchedulerStandIn, until } from './support/scheduler-stand-in.js';

// queue-api's HTTP routes against a stand-in scheduler on the bus: what each route asks the
// scheduler, and how it renders the answer (status codes, shapes, headers, limits, long polls).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MiB = 1024 * 1024;

/** A /run body of exactly `bytes` bytes. */
function bodyOfSize(bytes: number): string {
  const head = '{"input":{"pad":"';
  const tail = '"}}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

const job = (id: string): WorkerJob => ({ id, input: { n: id } });

function record(
  id: string,
  status: JobRecord['status'],
  extra: Partial<JobRecord> = {},
): JobRecord {
  return { id, status, ...extra };
}

describe('queue-api HTTP routes (stand-in scheduler)', () => {
  let server: TestServer;
  let sched: SchedulerStandIn;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, queueApiService]);
    sched = await SchedulerStandIn.serve(server.bus);
    const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
      keyHash: hashApiKey(server.apiKey),
    });
    userId = principal!.userId;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  }, 30_000);
  beforeEach(() => sched.reset());

  const url = (path: string) => `${server.url}${path}`;
  const replicaId = () => server.app.get(ReplicaRegistry, { strict: false }).id;

  describe('submission', () => {
    it('POST /run submits mode "run" under a fresh uuid and answers 200 {id, status} only', async () => {
      sched.on(
        'submitJob',
        (r) => ({ id: r.jobId, status: 'IN_QUEUE', extra: 'not for clients' }) as never,
      );
      const body = {
        input: { n: 1 },
        webhook: 'https://example.com/hook',
        policy: { ttl: 60_000 },
      };
      const res = await server.call('POST', '/v2/ep-1/run', body);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const submitted = sched.lastCall('submitJob')!;
      expect(submitted).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        jobId: expect.stringMatching(UUID),
        mode: 'run',
        job: body,
      });
      expect(res.body).toEqual({ id: submitted.jobId, status: 'IN_QUEUE' });
    });

    it('rejects bad bodies with 400 before asking the scheduler', async () => {
      const bad = await server.call('POST', '/v2/ep-1/run', {
        input: [1],
        policy: { executionTimeout: 10 },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
        'input',
        'policy.executionTimeout',
      ]);
      for (const raw of ['', 'null', '[]', '{"input": {']) {
        const res = await fetch(url('/v2/ep-1/run'), {
          method: 'POST',
          headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
          body: raw,
        });
        expect({ raw, status: res.status }).toEqual({ raw, status: 400 });
      }
      expect(sched.callsOf('submitJob')).toHaveLength(0);
    });

    it('passes scheduler errors through with their status', async () => {
      sched.on('submitJob', () => {
        throw new RunplaneError(404, 'endpoint ep-x not found');
      });
      const res = await server.call('POST', '/v2/ep-x/run', { input: {} });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({
        status: 404,
        error: 'endpoint ep-x not found',
        message: 'endpoint ep-x not found',
      });
    });

    it('POST /runsync submits a sync- job and waits for it in one scheduler request; a final record comes back whole', async () => {
      sched.on('runJobSync', (r) =>
        record(r.jobId, 'COMPLETED', { output: { ok: true }, delayTime: 5, executionTime: 7 }),
      );
      const res = await server.call('POST', '/v2/ep-1/runsync?wait=2000', { input: { n: 2 } });
      expect(res.status).toBe(200);
      const submitted = sched.lastCall('runJobSync')!;
      expect(submitted).toMatchObject({
        ownerId: userId,
        endpointId: 'ep-1',
        mode: 'runsync',
        job: { input: { n: 2 } },
        waitMs: 2000,
      });
      expect(submitted.jobId).toMatch(/^sync-[0-9a-f-]{36}$/);
      expect(sched.callsOf('submitJob')).toHaveLength(0);
      expect(sched.callsOf('awaitJob')).toHaveLength(0);
      expect(res.body).toEqual({
        id: submitted.jobId,
        status: 'COMPLETED',
        output: { ok: true },
        delayTime: 5,
        executionTime: 7,
      });
    });

    it('runsync whose wait elapses answers {id, status} of the unfinished job (default wait 90000)', async () => {
      sched.on('runJobSync', (r) =>
        record(r.jobId, 'IN_PROGRESS', { output: { progress: 1 }, delayTime: 3 }),
      );
      const res = await server.call('POST', '/v2/ep-1/runsync', { input: {} });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: sched.lastCall('runJobSync')!.jobId, status: 'IN_PROGRESS' });
      expect(sched.lastCall('runJobSync')!.waitMs).toBe(JOB_LIMITS.runsyncWait.default);
    });

    it('runsync ?wait outside 1000..300000 or not an integer -> 400 naming "wait", nothing submitted', async () => {
      for (const wait of ['999', '300001', '0', '-5', 'abc', '1500.5', '']) {
        const res = await server.call('POST', `/v2/ep-1/runsync?wait=${wait}`, { input: {} });
        expect({ wait, status: res.status }).toEqual({ wait, status: 400 });
        expect(res.body.details).toEqual([
          {
            path: 'wait',
            message: 'wait must be an integer number of milliseconds from 1000 to 300000',
          },
        ]);
      }
      expect(sched.callsOf('submitJob')).toHaveLength(0);
      expect(sched.callsOf('runJobSync')).toHaveLength(0);
    });
  });

  describe('payload limits (decided before the body is read)', () => {
    beforeEach(() => {
      sched.on('submitJob', (r) => ({ id: r.jobId, status: 'IN_QUEUE' as const }));
    });
    const headers = () => ({
      authorization: `Bearer ${server.apiKey}`,
      'content-type': 'application/json',
    });

    it('/run over 10 MB -> 413 from Content-Length alone; 9.5 MB is accepted', async () => {
      const big = await rawRequest('POST', url('/v2/ep-1/run'), {
        headers: { ...headers(), connection: 'keep-alive' },
        body: bodyOfSize(10.5 * MiB),
        holdBodyMs: 3000,
      });
      expect(big.status).toBe(413);
      expect(big.bodyBytesSent).toBe(0);
      // Answered before a byte of the body was sent; the rest is read and dropped (bounded), so the
      // connection survives and no client or proxy sees a reset instead of the answer.
      expect(big.headers.get('connection')).toBe('keep-alive');
      expect(big.json).toMatchObject({
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        error: expect.stringContaining('/run'),
      });
      expect(big.headers.get('content-type')).toMatch(/^application\/json/);
      const ok = await rawRequest('POST', url('/v2/ep-1/run'), {
        headers: headers(),
        body: bodyOfSize(9_500_000),
      });
      expect(ok.status).toBe(200);
      expect(sched.callsOf('submitJob')).toHaveLength(1);
    });

    it('/runsync over 20 MB -> 413; 15 MB (over the /run limit) is accepted', async () => {
      sched.on('runJobSync', (r) => record(r.jobId, 'IN_QUEUE'));
      const big = await rawRequest('POST', url('/v2/ep-1/runsync?wait=1000'), {
        headers: headers(),
        body: bodyOfSize(21 * MiB),
        holdBodyMs: 3000,
      });
      expect(big.status).toBe(413);
      expect(big.bodyBytesSent).toBe(0);
      const ok = await rawRequest('POST', url('/v2/ep-1/runsync?wait=1000'), {
        headers: headers(),
        body: bodyOfSize(15_000_000),
      });
      expect(ok.status).toBe(200);
      expect(ok.json).toMatchObject({ status: 'IN_QUEUE' });
    });

    it('a chunked body is cut off at the limit with 413; a small chunked body is accepted', async () => {
      const big = await rawRequest('POST', url('/v2/ep-1/run'), {
        headers: headers(),
        body: bodyOfSize(10.5 * MiB),
        chunked: true,
      });
      expect(big.status).toBe(413);
      expect(big.json.error).toContain('10 MB limit of /run'); // this route's limit, not the server-wide one
      const ok = await rawRequest('POST', url('/v2/ep-1/run'), {
        headers: headers(),
        body: '{"input":{"a":1}}',
        chunked: true,
      });
      expect(ok.status).toBe(200);
      expect(sched.lastCall('submitJob')!.job).toEqual({ input: { a: 1 } });
    });
  });

  describe('Idempotency-Key', () => {
    it('the same key returns the same job id and never submits a second id; another key or endpoint does', async () => {
      sched.on('submitJob', (r) => ({ id: r.jobId, status: 'IN_QUEUE' as const }));
      const run = (ep: string, key: string) =>
        server.call('POST', `/v2/${ep}/run`, { input: {} }, { 'idempotency-key': key });
      const a = await run('ep-i', 'key-1');
      const b = await run('ep-i', 'key-1');
      const c = await run('ep-i', 'key-2');
      const d = await run('ep-j', 'key-1');
      expect([a.status, b.status, c.status, d.status]).toEqual([200, 200, 200, 200]);
      expect(b.body.id).toBe(a.body.id);
      expect(new Set([a.body.id, c.body.id, d.body.id]).size).toBe(3);
      const submittedIds = sched.callsOf('submitJob').map((s) => s.jobId);
      expect(new Set(submittedIds)).toEqual(new Set([a.body.id, c.body.id, d.body.id]));
    });

    it('concurrent duplicates all get the one job id', async () => {
      sched.on('submitJob', async (r) => {
        await new Promise((res) => setTimeout(res, 20));
        return { id: r.jobId, status: 'IN_QUEUE' as const };
      });
      const all = await Promise.all(
        Array.from({ length: 8 }, () =>
          server.call('POST', '/v2/ep-c/run', { input: {} }, { 'idempotency-key': 'same-time' }),
        ),
      );
      expect(all.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(new Set(all.map((r) => r.body.id)).size).toBe(1);
      expect(new Set(sched.callsOf('submitJob').map((s) => s.jobId))).toEqual(
        new Set([all[0].body.id]),
      );
    });

    it('works on /runsync too, and frees the key when the scheduler rejects the submission', async () => {
      let reject = true;
      sched.on('runJobSync', (r) => {
        if (reject) throw new RunplaneError(404, 'no such endpoint');
        return record(r.jobId, 'COMPLETED', { output: 1 });
      });
      const first = await server.call(
        'POST',
        '/v2/ep-r/runsync?wait=1000',
        { input: {} },
        { 'idempotency-key': 'k' },
      );
      expect(first.status).toBe(404);
      const rejectedId = sched.lastCall('runJobSync')!.jobId;
      reject = false;
      const second = await server.call(
        'POST',
        '/v2/ep-r/runsync?wait=1000',
        { input: {} },
        { 'idempotency-key': 'k' },
      );
      const third = await server.call(
        'POST',
        '/v2/ep-r/runsync?wait=1000',
        { input: {} },
        { 'idempotency-key': 'k' },
      );
      expect(second.status).toBe(200);
      expect(second.body.id).not.toBe(rejectedId);
      expect(second.body.id).toMatch(/^sync-/);
      expect(third.body.id).toBe(second.body.id);
    });

    it('keeps the key of a runsync job whose TTL ran out while it was awaited (it existed)', async () => {
      let expire = true;
      sched.on('runJobSync', (r) => {
        if (expire)
          throw new RunplaneError(404, `job ${r.jobId} not found`, undefined, 'JOB_NOT_FOUND');
        return record(r.jobId, 'COMPLETED', { output: 1 });
      });
      expect(
        (
          await server.call(
            'POST',
            '/v2/ep-t/runsync?wait=1000',
            { input: {} },
            { 'idempotency-key': 'k-ttl' },
          )
        ).status,
      ).toBe(404);
      expire = false;
      const again = await server.call(
        'POST',
        '/v2/ep-t/runsync?wait=1000',
        { input: {} },
        { 'idempotency-key': 'k-ttl' },
      );
      expect(new Set(sched.callsOf('runJobSync').map((s) => s.jobId))).toEqual(
        new Set([again.body.id]),
      );
    });

    it('keeps the key after a scheduler fault (the job may exist): a retry resubmits the same id', async () => {
      let fail = true;
      sched.on('submitJob', (r) => {
        if (fail) throw new RunplaneError(500, 'boom');
        return { id: r.jobId, status: 'IN_QUEUE' as const };
      });
      expect(
        (await server.call('POST', '/v2/ep-f/run', { input: {} }, { 'idempotency-key': 'k5' }))
          .status,
      ).toBe(500);
      fail = false;
      const retried = await server.call(
        'POST',
        '/v2/ep-f/run',
        { input: {} },
        { 'idempotency-key': 'k5' },
      );
      expect(retried.status).toBe(200);
      expect(new Set(sched.callsOf('submitJob').map((s) => s.jobId))).toEqual(
        new Set([retried.body.id]),
      );
    });

    it('rejects an over-long key with 400', async () => {
      const res = await server.call(
        'POST',
        '/v2/ep-1/run',
        { input: {} },
        { 'idempotency-key': 'k'.repeat(300) },
      );
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe('Idempotency-Key');
    });
  });

  describe('status, status-sync, cancel, retry, purge, health, requests', () => {
    it('GET and POST /status return the record; ?ttl= is passed as ttlMs and validated', async () => {
      sched.on('getJob', (r) =>
        record(r.jobId, 'COMPLETED', { output: 'x', delayTime: 1, executionTime: 2 }),
      );
      const viaGet = await server.call('GET', '/v2/ep-1/status/job-1');
      const viaPost = await server.call('POST', '/v2/ep-1/status/job-1');
      expect(viaGet.status).toBe(200);
      expect(viaPost.body).toEqual(viaGet.body);
      expect(viaGet.body).toEqual({
        id: 'job-1',
        status: 'COMPLETED',
        output: 'x',
        delayTime: 1,
        executionTime: 2,
      });
      expect(sched.callsOf('getJob')).toEqual([
        { ownerId: userId, endpointId: 'ep-1', jobId: 'job-1' },
        { ownerId: userId, endpointId: 'ep-1', jobId: 'job-1' },
      ]);
      await server.call('GET', '/v2/ep-1/status/job-1?ttl=10000');
      expect(sched.lastCall('getJob')).toMatchObject({ ttlMs: 10_000 });
      for (const ttl of ['9999', '604800001', 'soon']) {
        const bad = await server.call('GET', `/v2/ep-1/status/job-1?ttl=${ttl}`);
        expect({ ttl, status: bad.status, path: bad.body.details?.[0]?.path }).toEqual({
          ttl,
          status: 400,
          path: 'ttl',
        });
      }
    });

    it('/status-sync waits with awaitJob (GET and POST) and returns the record even if not final', async () => {
      sched.on('awaitJob', (r) => record(r.jobId, 'IN_PROGRESS', { output: { pct: 50 } }));
      const res = await server.call('GET', '/v2/ep-1/status-sync/job-2?wait=1500');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: 'job-2', status: 'IN_PROGRESS', output: { pct: 50 } });
      expect(sched.lastCall('awaitJob')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        jobId: 'job-2',
        waitMs: 1500,
      });
      const viaPost = await server.call('POST', '/v2/ep-1/status-sync/job-2');
      expect(viaPost.status).toBe(200);
      expect(sched.lastCall('awaitJob')!.waitMs).toBe(JOB_LIMITS.runsyncWait.default);
      for (const wait of ['999', '300001']) {
        const bad = await server.call('GET', `/v2/ep-1/status-sync/job-2?wait=${wait}`);
        expect({ wait, status: bad.status, path: bad.body.details?.[0]?.path }).toEqual({
          wait,
          status: 400,
          path: 'wait',
        });
      }
    });

    it("cancel, retry, purge-queue, health answer 200 with the scheduler's body; errors keep their status", async () => {
      sched.on('cancelJob', (r) => ({ id: r.jobId, status: 'CANCELLED' as const }));
      sched.on('retryJob', () => {
        throw new RunplaneError(409, 'only FAILED or TIMED_OUT jobs can be retried');
      });
      sched.on('purgeQueue', () => ({ removed: 3, status: 'completed' }));
      const health = {
        jobs: { completed: 1, failed: 0, inProgress: 2, inQueue: 3, retried: 0 },
        workers: { idle: 1, initializing: 0, ready: 1, running: 2, throttled: 0, unhealthy: 0 },
      };
      sched.on('health', () => health);
      const cancel = await server.call('POST', '/v2/ep-1/cancel/job-3', null);
      expect([cancel.status, cancel.body]).toEqual([200, { id: 'job-3', status: 'CANCELLED' }]);
      const retry = await server.call('POST', '/v2/ep-1/retry/job-3', {});
      expect([retry.status, retry.body.status, retry.body.error]).toEqual([
        409,
        409,
        'only FAILED or TIMED_OUT jobs can be retried',
      ]);
      const purge = await server.call('POST', '/v2/ep-1/purge-queue');
      expect([purge.status, purge.body]).toEqual([200, { removed: 3, status: 'completed' }]);
      const h = await server.call('GET', '/v2/ep-1/health');
      expect([h.status, h.body]).toEqual([200, health]);
      expect(sched.lastCall('cancelJob')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        jobId: 'job-3',
      });
      expect(sched.lastCall('retryJob')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        jobId: 'job-3',
      });
      expect(sched.lastCall('purgeQueue')).toEqual({ ownerId: userId, endpointId: 'ep-1' });
      expect(sched.lastCall('health')).toEqual({ ownerId: userId, endpointId: 'ep-1' });
    });

    it('GET /requests passes status, limit (default 50) and cursor; bad values -> 400 naming the parameter', async () => {
      const page = {
        requests: [{ id: 'j', status: 'IN_QUEUE' as const, createdAt: '2026-01-01T00:00:00.000Z' }],
        nextCursor: 'c2',
      };
      sched.on('listJobs', () => page);
      const all = await server.call('GET', '/v2/ep-1/requests');
      expect([all.status, all.body]).toEqual([200, page]);
      expect(sched.lastCall('listJobs')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        limit: 50,
      });
      await server.call('GET', '/v2/ep-1/requests?status=FAILED&limit=2&cursor=c1');
      expect(sched.lastCall('listJobs')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        status: 'FAILED',
        limit: 2,
        cursor: 'c1',
      });
      for (const [query, path] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=x', 'limit'],
        ['status=DONE', 'status'],
      ]) {
        const bad = await server.call('GET', `/v2/ep-1/requests?${query}`);
        expect({ query, status: bad.status, path: bad.body.details?.[0]?.path }).toEqual({
          query,
          status: 400,
          path,
        });
      }
    });
  });

  describe('/stream', () => {
    it('GET and POST drain with streamJob (default wait 10000, ?wait=); "stream" is always an array', async () => {
      const chunks = [{ output: { i: 0 } }, { output: { i: 1 } }];
      sched.on('streamJob', (r) => ({
        id: r.jobId,
        status: 'IN_PROGRESS' as const,
        stream: r.waitMs === 1000 ? (undefined as never) : chunks,
      }));
      const res = await server.call('GET', '/v2/ep-1/stream/job-s');
      expect([res.status, res.body]).toEqual([
        200,
        { id: 'job-s', status: 'IN_PROGRESS', stream: chunks },
      ]);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(sched.lastCall('streamJob')).toEqual({
        ownerId: userId,
        endpointId: 'ep-1',
        jobId: 'job-s',
        waitMs: JOB_LIMITS.streamWait.default,
      });
      const viaPost = await server.call('POST', '/v2/ep-1/stream/job-s?wait=1000');
      expect([viaPost.status, viaPost.body]).toEqual([
        200,
        { id: 'job-s', status: 'IN_PROGRESS', stream: [] },
      ]);
      for (const wait of ['999', '300001', 'x']) {
        const bad = await server.call('GET', `/v2/ep-1/stream/job-s?wait=${wait}`);
        expect({ wait, status: bad.status, path: bad.body.details?.[0]?.path }).toEqual({
          wait,
          status: 400,
          path: 'wait',
        });
      }
    });

    it('with Accept: text/event-stream sends each chunk as an event until the job is final', async () => {
      const answers: StreamResponse[] = [
        { id: 'job-e', status: 'IN_PROGRESS', stream: [{ output: 'a' }] },
        { id: 'job-e', status: 'IN_PROGRESS', stream: [] },
        { id: 'job-e', status: 'COMPLETED', stream: [{ output: 'b' }, { output: { c: 3 } }] },
      ];
      sched.on(
        'streamJob',
        () =>
          answers.shift() ?? {
            id: 'job-e',
            status: 'COMPLETED' as const,
            stream: [{ output: 'too many polls' }],
          },
      );
      const res = await fetch(url('/v2/ep-1/stream/job-e?wait=2000'), {
        headers: { authorization: `Bearer ${server.apiKey}`, accept: 'text/event-stream' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const text = await res.text();
      expect(text).toBe(
        'data: {"output":"a"}\n\n: keep-alive\n\ndata: {"output":"b"}\n\ndata: {"output":{"c":3}}\n\n' +
          'event: status\ndata: {"id":"job-e","status":"COMPLETED"}\n\n',
      );
      expect(sched.callsOf('streamJob').map((c) => c.waitMs)).toEqual([0, 2000, 2000]);
    });

    it('an SSE request for an unknown job is a plain JSON 404', async () => {
      sched.on('streamJob', () => {
        throw new RunplaneError(404, 'job not found');
      });
      const res = await fetch(url('/v2/ep-1/stream/nope'), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, accept: 'text/event-stream' },
      });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ status: 404, error: 'job not found' });
    });

    it('stops polling when the SSE client goes away', async () => {
      const pending = deferred<StreamResponse>();
      sched.on('streamJob', (r) =>
        r.waitMs === 0
          ? { id: r.jobId, status: 'IN_PROGRESS' as const, stream: [{ output: 1 }] }
          : pending.promise,
      );
      const abort = new AbortController();
      const res = await fetch(url('/v2/ep-1/stream/job-d'), {
        headers: { authorization: `Bearer ${server.apiKey}`, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"output":1}\n\n');
      await until(() => sched.callsOf('streamJob').length === 2, 5000, 'the second poll');
      abort.abort();
      await new Promise((r) => setTimeout(r, 100));
      pending.resolve({ id: 'job-d', status: 'IN_PROGRESS', stream: [{ output: 2 }] });
      await new Promise((r) => setTimeout(r, 300));
      expect(sched.callsOf('streamJob')).toHaveLength(2);
    });
  });

  describe('worker routes', () => {
    const workerHeaders = (extra: Record<string, string> = {}) => ({
      authorization: server.apiKey,
      ...extra,
    });

    it('job-take long-polls takeJobs and answers one job as JSON, or 204 with an empty body', async () => {
      sched.on('takeJobs', () => ({ jobs: [job('j1')] }));
      const res = await fetch(url('/v2/ep-w/job-take/w1?gpu=RTX&job_in_progress=0'), {
        headers: workerHeaders(),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(job('j1'));
      expect(sched.lastCall('takeJobs')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        batchSize: 1,
        waitMs: WORKER_LONG_POLL_MS,
        relay: replicaId(),
        pollId: expect.stringMatching(new RegExp(`^${replicaId()}/\\d+$`)),
      });

      sched.on('takeJobs', () => ({ jobs: [] }));
      const none = await fetch(url('/v2/ep-w/job-take/w1?gpu=RTX&job_in_progress=1'), {
        headers: workerHeaders(),
      });
      expect(none.status).toBe(204);
      expect(await none.text()).toBe('');
    });

    it('job-take-batch answers an array of at most batch_size (clamped to 1..100) jobs', async () => {
      sched.on('takeJobs', (r) => ({
        jobs: Array.from({ length: Math.min(r.batchSize, 3) }, (_, i) => job(`b${i}`)),
      }));
      const res = await fetch(
        url('/v2/ep-w/job-take-batch/w1?gpu=x&batch_size=2&job_in_progress=0'),
        { headers: workerHeaders() },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([job('b0'), job('b1')]);
      expect(sched.lastCall('takeJobs')!.batchSize).toBe(2);
      await fetch(url('/v2/ep-w/job-take-batch/w1?batch_size=500'), { headers: workerHeaders() });
      expect(sched.lastCall('takeJobs')!.batchSize).toBe(100);
      await fetch(url('/v2/ep-w/job-take-batch/w1?batch_size=zero'), { headers: workerHeaders() });
      expect(sched.lastCall('takeJobs')!.batchSize).toBe(1);
    });

    it('a single take that receives more than one job hands out one and gives the rest back', async () => {
      sched.on('takeJobs', () => ({ jobs: [job('x1'), job('x2'), job('x3')] }));
      sched.on('releaseJobs', () => ({ ok: true as const }));
      const res = await fetch(url('/v2/ep-w/job-take/w2'), { headers: workerHeaders() });
      expect(await res.json()).toEqual(job('x1'));
      expect(sched.callsOf('releaseJobs')).toEqual([
        { ownerId: userId, endpointId: 'ep-w', workerId: 'w2', jobIds: ['x2', 'x3'] },
      ]);
    });

    it('gives the jobs back when the worker disconnected before they could be delivered', async () => {
      const pending = deferred<{ jobs: WorkerJob[] }>();
      sched.on('takeJobs', () => pending.promise);
      sched.on('releaseJobs', () => ({ ok: true as const }));
      const abort = new AbortController();
      const take = fetch(url('/v2/ep-w/job-take/w3'), {
        headers: workerHeaders(),
        signal: abort.signal,
      }).catch((err) => err);
      await until(
        () => sched.callsOf('takeJobs').length === 1,
        5000,
        'the take to reach the scheduler',
      );
      abort.abort();
      await take;
      await new Promise((r) => setTimeout(r, 100));
      pending.resolve({ jobs: [job('lost-1'), job('lost-2')] });
      await until(() => sched.callsOf('releaseJobs').length === 1, 5000, 'releaseJobs');
      expect(sched.lastCall('releaseJobs')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w3',
        jobIds: ['lost-1', 'lost-2'],
      });
    });

    it('reports the job-take and job-stop polls whose worker left, and only those (their rounds no longer say it is alive)', async () => {
      const ended: WorkerPollsEndedSignal[] = [];
      const sub = await server.bus.onSignal(QueueApiSignals.workerPollsEnded, (signal) => {
        ended.push(signal);
      });
      const take = deferred<{ jobs: WorkerJob[] }>();
      const stops = deferred<{ jobsToStop: string[] }>();
      sched.on('takeJobs', () => take.promise);
      sched.on('stopJobs', () => stops.promise);
      sched.on('releaseJobs', () => ({ ok: true as const }));
      try {
        const leaving = new AbortController();
        const polls = [
          fetch(url('/v2/ep-w/job-take/w-gone'), {
            headers: workerHeaders(),
            signal: leaving.signal,
          }),
          fetch(url('/v2/ep-w/job-stop/w-gone'), {
            headers: workerHeaders(),
            signal: leaving.signal,
          }),
          fetch(url('/v2/ep-w/job-take/w-stays'), { headers: workerHeaders() }),
        ].map((p) => p.catch((err: unknown) => err));
        await until(
          () => sched.callsOf('takeJobs').length === 2 && sched.callsOf('stopJobs').length === 1,
          5000,
          'the polls to reach the scheduler',
        );
        const pollOf = (calls: { workerId: string; pollId?: string }[]) =>
          calls.find((c) => c.workerId === 'w-gone')!.pollId;
        const gone = [pollOf(sched.callsOf('takeJobs')), pollOf(sched.callsOf('stopJobs'))];
        leaving.abort();
        await until(
          () => ended.flatMap((e) => e.polls).length >= 2,
          5000,
          'the ended polls reported',
        );
        expect(ended.flatMap((e) => e.polls).sort()).toEqual([...gone].sort());
        expect(ended.every((e) => e.replica === replicaId())).toBe(true);
        // The poll still held is answered as usual and reported as nothing.
        take.resolve({ jobs: [] });
        stops.resolve({ jobsToStop: [] });
        const [, , stays] = await Promise.all(polls);
        expect((stays as Response).status).toBe(204);
        expect(ended.flatMap((e) => e.polls)).toHaveLength(2);
      } finally {
        take.resolve({ jobs: [] }); // no poll left pending when an assertion failed
        stops.resolve({ jobsToStop: [] });
        await sub.stop();
      }
    });

    it('job-done takes the raw JSON body whatever the content-type and reads isStream', async () => {
      sched.on('jobDone', () => ({ ok: true as const }));
      const post = (path: string, body: string, headers: Record<string, string> = {}) =>
        fetch(url(path), {
          method: 'POST',
          headers: workerHeaders({
            'content-type': 'application/x-www-form-urlencoded',
            ...headers,
          }),
          body,
        });
      const res = await post(
        '/v2/ep-w/job-done/w1/j1?gpu=x&isStream=false',
        '{"output": {"a": "ü"}, "stopPod": true}',
        { 'x-request-id': 'j1' },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(sched.lastCall('jobDone')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        jobId: 'j1',
        body: { output: { a: 'ü' }, stopPod: true },
        isStream: false,
      });
      await post('/v2/ep-w/job-done/w1/j1?gpu=x&isStream=true', '{"output": []}');
      expect(sched.lastCall('jobDone')).toMatchObject({
        jobId: 'j1',
        isStream: true,
        body: { output: [] },
      });
      await fetch(url('/v2/ep-w/job-done/w1/j1'), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}` },
        body: '{"error": "bad"}',
      });
      expect(sched.lastCall('jobDone')).toMatchObject({
        jobId: 'j1',
        isStream: false,
        body: { error: 'bad' },
      });
      for (const body of ['[1]', '"text"', '', 'not json']) {
        const bad = await post('/v2/ep-w/job-done/w1/j1?isStream=false', body);
        expect({ body, status: bad.status }).toEqual({ body, status: 400 });
      }
    });

    it('is lenient with worker URLs: "&" glued to the last segment, $ID or no job segment with X-Request-ID', async () => {
      sched.on('jobDone', () => ({ ok: true as const }));
      sched.on('jobStream', () => ({ ok: true as const }));
      sched.on('takeJobs', () => ({ jobs: [] }));
      sched.on('ping', () => ({ ok: true as const }));
      const post = (path: string, headers: Record<string, string> = {}) =>
        fetch(url(path), {
          method: 'POST',
          headers: workerHeaders(headers),
          body: '{"output": 1}',
        });

      expect((await post('/v2/ep-w/job-done/w1/j9&isStream=true')).status).toBe(200);
      expect(sched.lastCall('jobDone')).toMatchObject({
        workerId: 'w1',
        jobId: 'j9',
        isStream: true,
      });
      expect(
        (await post('/v2/ep-w/job-done/w1/$ID?gpu=x&isStream=false', { 'x-request-id': 'j10' }))
          .status,
      ).toBe(200);
      expect(sched.lastCall('jobDone')).toMatchObject({
        workerId: 'w1',
        jobId: 'j10',
        isStream: false,
      });
      expect(
        (await post('/v2/ep-w/job-done/w1?gpu=x&isStream=true', { 'x-request-id': 'j11' })).status,
      ).toBe(200);
      expect(sched.lastCall('jobDone')).toMatchObject({
        workerId: 'w1',
        jobId: 'j11',
        isStream: true,
      });
      expect(
        (await post('/v2/ep-w/job-done/w1&isStream=false', { 'x-request-id': 'j12' })).status,
      ).toBe(200);
      expect(sched.lastCall('jobDone')).toMatchObject({ workerId: 'w1', jobId: 'j12' });
      expect((await post('/v2/ep-w/job-stream/w1/j13&isStream=false')).status).toBe(200);
      expect(sched.lastCall('jobStream')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        jobId: 'j13',
        body: { output: 1 },
      });

      const noJob = await post('/v2/ep-w/job-done/w1/$ID?isStream=false');
      expect(noJob.status).toBe(400);
      expect(((await noJob.json()) as any).details[0].path).toBe('jobId');

      expect(
        (await fetch(url('/v2/ep-w/job-take/w7&job_in_progress=0'), { headers: workerHeaders() }))
          .status,
      ).toBe(204);
      expect(sched.lastCall('takeJobs')!.workerId).toBe('w7');
      expect(
        (
          await fetch(url('/v2/ep-w/ping/w7&job_id=a,b&runpod_version=1.12.0'), {
            headers: workerHeaders(),
          })
        ).status,
      ).toBe(200);
      expect(sched.lastCall('ping')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w7',
        jobIds: ['a', 'b'],
        reportsJobs: true,
      });
    });

    it('ping passes the in-progress job ids (complete when runpod_version is sent) and the fitness-failure status', async () => {
      sched.on('ping', () => ({ ok: true as const }));
      const ping = (query: string) =>
        fetch(url(`/v2/ep-w/ping/w1?${query}`), { headers: workerHeaders() });
      const res = await ping('gpu=x&job_id=j1%2Cj2&runpod_version=1.12.0');
      expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
      expect(sched.lastCall('ping')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        jobIds: ['j1', 'j2'],
        reportsJobs: true,
      });
      await ping('runpod_version=1.12.0');
      expect(sched.lastCall('ping')).toMatchObject({ jobIds: [], reportsJobs: true });
      await ping('job_id=j3');
      expect(sched.lastCall('ping')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        jobIds: ['j3'],
      });
      await ping('status=unhealthy&check=memory&reason=only%201%20GB&runpod_version=1.12.0');
      expect(sched.lastCall('ping')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        jobIds: [],
        reportsJobs: true,
        status: 'unhealthy',
        reason: 'memory: only 1 GB',
      });
    });

    it('job-stop answers {jobsToStop} as JSON, or 204', async () => {
      sched.on('stopJobs', () => ({ jobsToStop: ['s1'] }));
      const res = await fetch(url('/v2/ep-w/job-stop/w1?gpu=x'), { headers: workerHeaders() });
      expect([
        res.status,
        res.headers.get('content-type')?.startsWith('application/json'),
        await res.json(),
      ]).toEqual([200, true, { jobsToStop: ['s1'] }]);
      expect(sched.lastCall('stopJobs')).toEqual({
        ownerId: userId,
        endpointId: 'ep-w',
        workerId: 'w1',
        waitMs: WORKER_LONG_POLL_MS,
        relay: replicaId(),
        pollId: expect.stringMatching(new RegExp(`^${replicaId()}/\\d+$`)),
      });
      sched.on('stopJobs', () => ({ jobsToStop: [] }));
      const none = await fetch(url('/v2/ep-w/job-stop/w1?gpu=x'), { headers: workerHeaders() });
      expect([none.status, await none.text()]).toEqual([204, '']);
    });

    it('needs a key (raw or Bearer); scheduler errors such as an unknown job keep their status', async () => {
      sched.on('jobDone', () => {
        throw new RunplaneError(404, 'job not found');
      });
      const anon = await fetch(url('/v2/ep-w/job-take/w1'));
      expect(anon.status).toBe(401);
      const wrong = await fetch(url('/v2/ep-w/ping/w1'), {
        headers: { authorization: 'rpk_wrong' },
      });
      expect(wrong.status).toBe(401);
      const unknown = await fetch(url('/v2/ep-w/job-done/w1/nope'), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}` },
        body: '{"output":1}',
      });
      expect([unknown.status, ((await unknown.json()) as any).status]).toEqual([404, 404]);
      expect(sched.callsOf('takeJobs')).toHaveLength(0);
    });
  });

  describe('/openai/v1/*', () => {
    beforeEach(() => {
      sched.on('submitJob', (r) => ({ id: r.jobId, status: 'IN_QUEUE' as const }));
    });

    it('submits {openai_route, openai_input} and answers the first element of the output list', async () => {
      sched.on('awaitJob', (r) =>
        record(r.jobId, 'COMPLETED', {
          output: [{ object: 'chat.completion', id: 'c1' }, { ignored: true }],
        }),
      );
      const req = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
      const res = await server.call('POST', '/v2/ep-o/openai/v1/chat/completions?x=1', req);
      expect([res.status, res.body]).toEqual([200, { object: 'chat.completion', id: 'c1' }]);
      const submitted = sched.lastCall('submitJob')!;
      expect(submitted).toMatchObject({
        ownerId: userId,
        endpointId: 'ep-o',
        mode: 'runsync',
        job: { input: { openai_route: '/v1/chat/completions', openai_input: req } },
      });
      expect(submitted.jobId).toMatch(/^sync-/);
    });

    it('GET /models has no openai_input and answers a non-list output as it is; a failed job is an error', async () => {
      sched.on('awaitJob', (r) =>
        record(r.jobId, 'COMPLETED', { output: { object: 'list', data: [] } }),
      );
      const models = await server.call('GET', '/v2/ep-o/openai/v1/models');
      expect([models.status, models.body]).toEqual([200, { object: 'list', data: [] }]);
      expect(sched.lastCall('submitJob')!.job).toEqual({ input: { openai_route: '/v1/models' } });
      sched.on('awaitJob', (r) => record(r.jobId, 'FAILED', { error: 'CUDA out of memory' }));
      const failed = await server.call('POST', '/v2/ep-o/openai/v1/completions', { prompt: 'x' });
      expect(failed.status).toBe(500);
      // The job ran and failed: an OpenAI SDK must not send it again as a new job.
      expect(failed.headers.get('x-should-retry')).toBe('false');
      // OpenAI's error shape, which OpenAI SDKs turn into their APIError.
      expect(failed.body).toEqual({
        error: {
          code: 'JOB_FAILED',
          type: 'worker_error',
          param: null,
          message: expect.stringContaining('CUDA out of memory'),
        },
      });
    });

    it('"stream": true relays the streamed strings unchanged as text/event-stream', async () => {
      const answers: StreamResponse[] = [
        { id: 'x', status: 'IN_PROGRESS', stream: [{ output: 'data: {"i":0}\n\n' }] },
        { id: 'x', status: 'IN_PROGRESS', stream: [] },
        {
          id: 'x',
          status: 'COMPLETED',
          stream: [{ output: 'data: {"i":1}\n\n' }, { output: 'data: [DONE]\n\n' }],
        },
      ];
      sched.on('streamJob', () => answers.shift()!);
      const res = await fetch(url('/v2/ep-o/openai/v1/chat/completions'), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ stream: true }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await res.text()).toBe('data: {"i":0}\n\ndata: {"i":1}\n\ndata: [DONE]\n\n');
    });

    it('cancels the job when the client leaves before the answer', async () => {
      const pending = deferred<JobRecord>();
      sched.on('awaitJob', () => pending.promise);
      sched.on('cancelJob', (r) => ({ id: r.jobId, status: 'CANCELLED' as const }));
      const abort = new AbortController();
      const call = fetch(url('/v2/ep-o/openai/v1/chat/completions'), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}` },
        body: '{"model":"m"}',
        signal: abort.signal,
      }).catch((err) => err);
      await until(() => sched.callsOf('awaitJob').length === 1, 5000, 'the wait to start');
      abort.abort();
      await call;
      await until(() => sched.callsOf('cancelJob').length === 1, 5000, 'cancelJob');
      expect(sched.lastCall('cancelJob')!.jobId).toBe(sched.lastCall('submitJob')!.jobId);
      pending.resolve(record(sched.lastCall('submitJob')!.jobId, 'CANCELLED'));
    });
  });

  // Last: it stops the server.
  describe('shutdown', () => {
    it('ends pending long polls at once: job-take 204, status-sync with the record as it is', async () => {
      const take = deferred<{ jobs: WorkerJob[] }>();
      const waiting = deferred<JobRecord>();
      sched.on('takeJobs', () => take.promise);
      sched.on('awaitJob', () => waiting.promise);
      sched.on('getJob', (r) => record(r.jobId, 'IN_QUEUE'));
      sched.on('releaseJobs', () => ({ ok: true as const }));
      const takeRes = fetch(url('/v2/ep-w/job-take/w1'), {
        headers: { authorization: server.apiKey },
      });
      const syncRes = server.call('GET', '/v2/ep-1/status-sync/job-z?wait=300000');
      await until(
        () => sched.callsOf('takeJobs').length === 1 && sched.callsOf('awaitJob').length === 1,
        5000,
        'both polls',
      );
      const stopping = server.stop();
      const [t, s] = await Promise.all([takeRes, syncRes]);
      expect(t.status).toBe(204);
      expect([s.status, s.body]).toEqual([200, { id: 'job-z', status: 'IN_QUEUE' }]);
      // the scheduler's late answers: the job handed out after the poll ended goes back
      take.resolve({ jobs: [job('late')] });
      waiting.resolve(record('job-z', 'COMPLETED'));
      await stopping;
    }, 20_000);
  });
});
