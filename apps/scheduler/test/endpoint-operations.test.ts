import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  EndpointOperationsRpc,
  PodRpc,
  PodSignals,
  RunplaneError,
  SchedulerRpc,
  VaultRpc,
  type Endpoint,
  type GpuShortage,
  type StartWorkerRequest,
} from '@runplane/contracts';
import { createHash } from 'node:crypto';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { startHarness, until, type Harness } from './support.js';

// Operating endpoints over the scheduler's bus, with a stand-in pod-rest: the workers of an
// endpoint (states, exits, history), why its jobs wait, and its metrics from known data.
describe('endpoint operations: workers, waiting reasons, metrics', () => {
  let h: Harness;
  let owner: string;
  const started: StartWorkerRequest[] = [];
  /** Endpoints whose starts pod-rest refuses as it does a user who may not run commands locally. */
  const refusing = new Set<string>();
  /** Endpoints whose starts pod-rest answers with a GPU shortage (a machine with too few free GPUs). */
  const lackingGpus = new Map<string, GpuShortage>();

  const endpoint = async (config: Record<string, unknown>) =>
    (
      await h.call(SchedulerRpc.createEndpoint, {
        ownerId: owner,
        endpoint: { templateId: 'tpl-1', ...config } as never,
      })
    ).id;
  const get = (endpointId: string): Promise<Endpoint> =>
    h.call(SchedulerRpc.getEndpoint, { ownerId: owner, endpointId });
  const workers = (endpointId: string) =>
    h.call(EndpointOperationsRpc.workers, { ownerId: owner, endpointId });
  const submit = async (
    endpointId: string,
    jobId = `job-${Math.random().toString(36).slice(2)}`,
  ) => {
    await h.call(SchedulerRpc.submitJob, {
      ownerId: owner,
      endpointId,
      jobId,
      mode: 'run',
      job: { input: {} } as never,
    });
    return jobId;
  };
  const startOf = (endpointId: string, n = 1) =>
    until(
      async () => started.filter((s) => s.endpointId === endpointId)[n - 1],
      30_000,
      `start #${n} on ${endpointId}`,
    );
  const reasonsOf = async (endpointId: string) =>
    (await get(endpointId)).waiting?.reasons.map((r) => r.code) ?? [];

  beforeAll(async () => {
    h = await startHarness({
      RUNPLANE_WORKER_START_TIMEOUT_MS: '600000',
      RUNPLANE_WORKER_PING_INTERVAL_MS: '5000',
    });
    const keyHash = createHash('sha256').update(h.server.apiKey).digest('hex');
    owner = (await h.call(VaultRpc.verifyApiKey, { keyHash })).principal!.userId;
    const probe = await h
      .call(VaultRpc.mintWorkerKey, { userId: owner, endpointId: 'probe', workerId: 'probe' })
      .catch((e: RunplaneError) => e);
    if (probe instanceof RunplaneError && probe.status === 503) {
      await h.server.bus.serve(VaultRpc.mintWorkerKey, async () => ({
        keyId: 'k1',
        key: `worker-key-${Math.random()}`,
      }));
    }
    await h.server.bus.serve(PodRpc.startWorker, async (req) => {
      if (refusing.has(req.endpointId))
        throw new RunplaneError(
          403,
          'this user may not run commands on the local compute provider',
          undefined,
          'LOCAL_COMMANDS_NOT_ALLOWED',
        );
      const shortage = lackingGpus.get(req.endpointId);
      if (shortage) return { gpuShortage: shortage };
      started.push(req);
      return { podId: req.workerId };
    });
    await h.server.bus.serve(PodRpc.stopWorker, async () => ({ ok: true as const }));
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('workersMax 0: queued jobs wait with NO_WORKERS_ALLOWED; no queued jobs, no waiting', async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 0 });
    expect((await get(ep)).waiting).toBeUndefined();
    await submit(ep);
    await submit(ep);
    const e = await get(ep);
    expect(e.waiting).toEqual({
      jobs: 2,
      reasons: [
        { code: 'NO_WORKERS_ALLOWED', message: expect.stringContaining('workersMax is 0') },
      ],
    });
    const listed = await h.call(SchedulerRpc.listEndpoints, { ownerId: owner });
    expect(listed.find((x) => x.id === ep)?.waiting?.jobs).toBe(2);
    expect(await workers(ep)).toEqual([]);
  });

  it("another user's endpoint is not found for workers and metrics", async () => {
    const ep = await endpoint({ workersMax: 0 });
    for (const err of [
      await h.error(EndpointOperationsRpc.workers, { ownerId: 'someone-else', endpointId: ep }),
      await h.error(EndpointOperationsRpc.metrics, {
        ownerId: 'someone-else',
        endpointId: ep,
        window: '1h',
      }),
    ])
      expect(err.status).toBe(404);
  });

  it('too few free GPUs: GPUS_BUSY with the numbers, no worker kept, no back-off; the worker starts once they are free', async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 1, gpuCount: 2 });
    lackingGpus.set(ep, { needed: 2, free: 1, total: 4 });
    await submit(ep);
    const busy = await until(
      async () => (await get(ep)).waiting?.reasons.find((r) => r.code === 'GPUS_BUSY'),
      30_000,
      'GPUS_BUSY',
    );
    expect(busy).toEqual({
      code: 'GPUS_BUSY',
      message: expect.stringMatching(/needs 2 GPUs and 1 of the machine's 4 are free/),
      gpusNeeded: 2,
      gpusFree: 1,
      gpusTotal: 4,
    });
    expect(await reasonsOf(ep)).toEqual(['GPUS_BUSY']);
    expect(await workers(ep)).toEqual([]);
    lackingGpus.delete(ep);
    const start = await startOf(ep);
    expect(start.gpuCount).toBe(2);
    await until(
      async () => !(await reasonsOf(ep)).includes('GPUS_BUSY'),
      30_000,
      'GPUS_BUSY to go',
    );
  });

  it('more GPUs than the machine has: NOT_ENOUGH_GPUS (the start is refused and backs off)', async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 1, gpuCount: 8 });
    lackingGpus.set(ep, { needed: 8, free: 2, total: 2 });
    await submit(ep);
    const never = await until(
      async () => (await get(ep)).waiting?.reasons.find((r) => r.code === 'NOT_ENOUGH_GPUS'),
      30_000,
      'NOT_ENOUGH_GPUS',
    );
    expect(never).toEqual({
      code: 'NOT_ENOUGH_GPUS',
      message: expect.stringMatching(/needs 8 GPUs \(gpuCount\) and this machine has 2/),
      gpusNeeded: 8,
      gpusFree: 2,
      gpusTotal: 2,
    });
    expect(await reasonsOf(ep)).toEqual(['NOT_ENOUGH_GPUS', 'START_REFUSED']);
    expect((await workers(ep))[0]).toMatchObject({
      state: 'EXITED',
      reason: expect.stringContaining('NOT_ENOUGH_GPUS'),
    });
  });

  it('a refused start backs off: START_REFUSED names the refusal and the next try; the worker is listed as EXITED', async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 1 });
    refusing.add(ep);
    await submit(ep);
    const reason = await until(
      async () => (await get(ep)).waiting?.reasons.find((r) => r.code === 'START_REFUSED'),
      30_000,
      'START_REFUSED',
    );
    expect(reason).toMatchObject({
      failures: expect.any(Number),
      nextAttemptAt: expect.any(String),
      reason: expect.stringContaining('LOCAL_COMMANDS_NOT_ALLOWED'),
      message: expect.stringContaining('refused start'),
    });
    expect(new Date(reason.nextAttemptAt!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const list = await workers(ep);
    expect(list[0]).toMatchObject({
      state: 'EXITED',
      podId: null,
      exitCode: null,
      jobs: [],
      endedAt: expect.any(String),
      reason: expect.stringMatching(
        /^start refused: this user may not run commands.*LOCAL_COMMANDS_NOT_ALLOWED/,
      ),
    });
  });

  it('a worker goes INITIALIZING (WORKERS_STARTING), IDLE, RUNNING (stale after a release), then EXITED with its exit code; the crash backs off with START_BACKOFF', async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 1, scalerValue: 60 });
    const first = await submit(ep);
    const s = await startOf(ep);
    await until(
      async () => (await reasonsOf(ep)).includes('WORKERS_STARTING'),
      10_000,
      'WORKERS_STARTING',
    );
    expect(await workers(ep)).toEqual([
      {
        id: s.workerId,
        podId: s.workerId,
        state: 'INITIALIZING',
        version: 1,
        isStale: false,
        jobs: [],
        startedAt: expect.any(String),
        lastSeenAt: null,
        endedAt: null,
        exitCode: null,
        reason: null,
      },
    ]);

    // It calls in: idle, then it takes the job: running, and nothing holds the queue back.
    await h.call(SchedulerRpc.ping, { endpointId: ep, workerId: s.workerId, jobIds: [] });
    expect((await workers(ep))[0]).toMatchObject({ state: 'IDLE', lastSeenAt: expect.any(String) });
    const taken = await h.call(SchedulerRpc.takeJobs, {
      endpointId: ep,
      workerId: s.workerId,
      batchSize: 1,
      waitMs: 5000,
    });
    expect(taken.jobs.map((j) => j.id)).toEqual([first]);
    expect((await workers(ep))[0]).toMatchObject({ state: 'RUNNING', jobs: [first] });

    // One more job: the only worker workersMax allows is busy.
    await submit(ep);
    expect(await reasonsOf(ep)).toEqual(['THROTTLED']);

    // A hardware change is a rolling release: the busy worker runs an older version.
    await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: owner,
      endpointId: ep,
      changes: { gpuTypeIds: ['NVIDIA L4'] },
    });
    expect((await workers(ep))[0]).toMatchObject({ version: 1, isStale: true, state: 'RUNNING' });

    // Its process crashes: it ends with its exit code, its job is requeued, and starts back off.
    await h.server.bus.signal(PodSignals.workerExited, {
      endpointId: ep,
      workerId: s.workerId,
      exitCode: 1,
    });
    const ended = await until(
      async () => (await workers(ep)).find((w) => w.id === s.workerId && w.state === 'EXITED'),
      15_000,
      'the crashed worker EXITED',
    );
    expect(ended).toMatchObject({
      exitCode: 1,
      reason: 'crashed: exit code 1',
      jobs: [],
      endedAt: expect.any(String),
    });
    // The back-off lasts 2 s after one failure: should the next worker start before this look, it
    // crashes too (4 s, 8 s...), so a slow machine still sees it.
    const crashed = new Set([s.workerId]);
    const backoff = await until(
      async () => {
        const found = (await get(ep)).waiting?.reasons.find((r) => r.code === 'START_BACKOFF');
        if (found) return found;
        for (const next of started.filter((x) => x.endpointId === ep && !crashed.has(x.workerId))) {
          crashed.add(next.workerId);
          await h.server.bus.signal(PodSignals.workerExited, {
            endpointId: ep,
            workerId: next.workerId,
            exitCode: 1,
          });
        }
        return undefined;
      },
      60_000,
      'START_BACKOFF',
    );
    expect(backoff).toMatchObject({
      failures: expect.any(Number),
      exitCode: 1,
      reason: 'crashed: exit code 1',
      nextAttemptAt: expect.any(String),
      message: expect.stringMatching(/failed starts? in a row \(last: crashed: exit code 1\)/),
    });
    expect(crashed.has(backoff.workerId!)).toBe(true);
    expect((await get(ep)).waiting?.jobs).toBe(2);
  });

  it("a worker that ended for a reason the compute provider knows shows it: 'crashed: OOMKilled (exit code 137)'", async () => {
    const ep = await endpoint({ workersMin: 0, workersMax: 1, scalerValue: 60 });
    await submit(ep);
    const s = await startOf(ep);
    await h.server.bus.signal(PodSignals.workerExited, {
      endpointId: ep,
      workerId: s.workerId,
      exitCode: 137,
      reason: 'OOMKilled',
    });
    const ended = await until(
      async () => (await workers(ep)).find((w) => w.id === s.workerId && w.state === 'EXITED'),
      15_000,
      'the killed worker EXITED',
    );
    expect(ended).toMatchObject({ exitCode: 137, reason: 'crashed: OOMKilled (exit code 137)' });
  });

  it('metrics: counts and p70/p90/p98 of delay, execution and cold start from known data; windows are checked', async () => {
    const ep = await endpoint({ workersMax: 0 });
    const db = h.server.app.get(PrismaClient, { strict: false });
    const now = Date.now();
    const at = (ms: number) => new Date(ms);
    const job = (
      id: string,
      status: 'COMPLETED' | 'FAILED' | 'TIMED_OUT',
      created: number,
      delay: number,
      exec: number,
      retries = 0,
    ) => ({
      id: `${ep}-${id}`,
      endpointId: ep,
      ownerId: owner,
      status,
      mode: 'run',
      input: {},
      executionTimeoutMs: 600_000,
      ttlMs: 86_400_000,
      retries,
      createdAt: at(created),
      queuedAt: at(created),
      startedAt: at(created + delay),
      completedAt: at(created + delay + exec),
      expiresAt: at(now + 86_400_000),
    });
    // 100 completed jobs in the last 20 minutes: delays 10..1000 ms, executions 100..10000 ms.
    const base = now - 20 * 60_000;
    const data = Array.from({ length: 100 }, (_, i) =>
      job(`c${i}`, 'COMPLETED', base + i * 1000, (i + 1) * 10, (i + 1) * 100),
    );
    data.push(job('f1', 'FAILED', base, 10, 100, 1), job('f2', 'FAILED', base, 10, 100));
    data.push(job('t1', 'TIMED_OUT', base, 10, 100, 2));
    // Two hours ago: only in a wider window.
    data.push(job('old', 'COMPLETED', now - 2 * 3_600_000, 5, 5));
    await db.job.createMany({ data });
    await db.coldStart.createMany({
      data: Array.from({ length: 50 }, (_, i) => ({
        endpointId: ep,
        workerId: `w${i}`,
        at: at(base + i * 1000),
        ms: (i + 1) * 100,
      })),
    });

    const m = await h.call(EndpointOperationsRpc.metrics, {
      ownerId: owner,
      endpointId: ep,
      window: '1h',
    });
    expect(m.window).toBe('1h');
    expect(new Date(m.to).getTime() - new Date(m.from).getTime()).toBe(3_600_000);
    expect(m.jobs).toEqual({ completed: 100, failed: 2, timedOut: 1, retried: 2 });
    // Nearest rank over 100 delays 10..1000 plus three of 10 ms: the 73rd, 93rd, 101st of 103.
    expect(m.delayTime).toEqual({ samples: 103, p70: 700, p90: 900, p98: 980 });
    expect(m.executionTime).toEqual({ samples: 103, p70: 7000, p90: 9000, p98: 9800 });
    expect(m.coldStart).toEqual({ samples: 50, p70: 3500, p90: 4500, p98: 4900 });

    const day = await h.call(EndpointOperationsRpc.metrics, {
      ownerId: owner,
      endpointId: ep,
      window: '24h',
    });
    expect(day.jobs.completed).toBe(101);
    const quarter = await h.call(EndpointOperationsRpc.metrics, {
      ownerId: owner,
      endpointId: ep,
      window: '15m',
    });
    expect(quarter.jobs.completed).toBeLessThan(100);

    const empty = await h.call(EndpointOperationsRpc.metrics, {
      ownerId: owner,
      endpointId: await endpoint({ workersMax: 0 }),
      window: '1h',
    });
    expect(empty.delayTime).toEqual({ samples: 0, p70: null, p90: null, p98: null });

    for (const window of ['2d', '25h', '0m', '1s', 'abc', '']) {
      const err = await h.error(EndpointOperationsRpc.metrics, {
        ownerId: owner,
        endpointId: ep,
        window,
      });
      expect(err.status).toBe(400);
      expect(err.message).toContain('window');
    }
  });
});
