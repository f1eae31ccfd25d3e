import { describe, expect, it } from '@jest/globals';
import {
  decideScaling,
  queuedJobsThatMatter,
  type ScaleConfig,
  type ScaleQueue,
  type ScaleWorker,
} from '../src/autoscaler/scaling-policy.js';
import { gpuLabel, workerEnv } from '../src/autoscaler/worker-env.js';
import { startBackoffMs } from '../src/store/worker-rules.js';

const config = (c: Partial<ScaleConfig> = {}): ScaleConfig => ({
  workersMin: 0,
  workersMax: 3,
  idleTimeout: 5,
  scalerType: 'QUEUE_DELAY',
  scalerValue: 4,
  version: 1,
  ...c,
});
const queue = (q: Partial<ScaleQueue> = {}): ScaleQueue => ({
  queued: 0,
  running: 0,
  oldestWaitMs: null,
  ...q,
});
let n = 0;
const worker = (w: Partial<ScaleWorker> = {}): ScaleWorker => ({
  id: `w${n++}`,
  managed: true,
  state: 'ready',
  jobs: 0,
  idleMs: 0,
  version: 1,
  stopRequested: false,
  ...w,
});
const run = (c: Partial<ScaleConfig>, q: Partial<ScaleQueue>, ws: ScaleWorker[], backoff = false) =>
  decideScaling(config(c), queue(q), ws, { backoff });

describe('queuedJobsThatMatter', () => {
  it('no decision changes with queued jobs beyond it, whatever the endpoint and its workers', () => {
    const states: ScaleWorker['state'][] = ['initializing', 'ready', 'unhealthy', 'stopping'];
    let seed = 7;
    const pick = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    for (let round = 0; round < 2000; round++) {
      const c = config({
        workersMin: pick(3),
        workersMax: 1 + pick(6),
        scalerType: pick(2) ? 'QUEUE_DELAY' : 'REQUEST_COUNT',
        scalerValue: 1 + pick(10),
        idleTimeout: pick(10),
      });
      const ws = Array.from({ length: pick(8) }, () =>
        worker({
          state: states[pick(states.length)],
          managed: pick(5) > 0,
          jobs: pick(3),
          idleMs: pick(20_000),
          stopRequested: pick(6) === 0,
        }),
      );
      const cap = queuedJobsThatMatter(c, ws.length);
      const q = { running: pick(20), oldestWaitMs: pick(3) ? pick(20_000) : null };
      const counted = decideScaling(c, queue({ ...q, queued: cap }), ws, { backoff: false });
      for (const beyond of [cap + 1, cap * 3, 100_000])
        expect(decideScaling(c, queue({ ...q, queued: beyond }), ws, { backoff: false })).toEqual(
          counted,
        );
    }
  });
});

describe('decideScaling', () => {
  it('keeps workersMin workers, and nothing more without jobs', () => {
    expect(run({ workersMin: 2 }, {}, [])).toMatchObject({ start: 2, stop: [] });
    expect(run({ workersMin: 2 }, {}, [worker({ state: 'initializing' })])).toMatchObject({
      start: 1,
    });
    expect(run({ workersMin: 0 }, {}, [])).toMatchObject({ start: 0, stop: [] });
  });

  it('workers on their way out or gone (stopping, stopped, failed tombstones) are not capacity and are not stopped again', () => {
    const gone = ['stopping', 'stopped', 'failed'].map((state) =>
      worker({ state: state as never, idleMs: 60_000 }),
    );
    expect(run({ workersMin: 1 }, {}, gone)).toEqual({ start: 1, stop: [], desired: 1 });
  });

  it('scales from zero at once when a normal job arrives, but not for low-priority jobs', () => {
    expect(run({}, { queued: 1, oldestWaitMs: 0 }, [])).toMatchObject({ start: 1 });
    // lowPriority jobs are not counted in `queued` at all
    expect(run({}, { queued: 0, running: 0 }, [])).toMatchObject({ start: 0 });
    expect(run({ workersMax: 0 }, { queued: 5, oldestWaitMs: 60_000 }, [])).toMatchObject({
      start: 0,
    });
  });

  it('QUEUE_DELAY adds workers only once the oldest job waited longer than scalerValue seconds', () => {
    const busy = [worker({ jobs: 1 })];
    expect(run({ scalerValue: 4 }, { queued: 2, oldestWaitMs: 3000 }, busy)).toMatchObject({
      start: 0,
    });
    expect(run({ scalerValue: 4 }, { queued: 2, oldestWaitMs: 4500 }, busy)).toMatchObject({
      start: 2,
    });
    expect(
      run({ scalerValue: 4, workersMax: 2 }, { queued: 5, oldestWaitMs: 9000 }, busy),
    ).toMatchObject({ start: 1 });
  });

  it('QUEUE_DELAY does not add workers for jobs an idle or starting worker will take', () => {
    expect(
      run({}, { queued: 1, oldestWaitMs: 9000 }, [
        worker({ jobs: 1 }),
        worker({ state: 'initializing' }),
      ]),
    ).toMatchObject({ start: 0 });
    expect(
      run({}, { queued: 2, oldestWaitMs: 9000 }, [worker({ jobs: 0, idleMs: 60_000 })]),
    ).toMatchObject({ start: 1, stop: [] });
  });

  it('REQUEST_COUNT wants ceil((queued + running) / scalerValue) workers', () => {
    expect(
      run({ scalerType: 'REQUEST_COUNT', scalerValue: 2 }, { queued: 3, running: 2 }, [
        worker({ jobs: 1 }),
        worker({ jobs: 1 }),
      ]),
    ).toMatchObject({ start: 1, desired: 3 });
    expect(
      run({ scalerType: 'REQUEST_COUNT', scalerValue: 10, workersMax: 5 }, { queued: 100 }, []),
    ).toMatchObject({ start: 5 });
  });

  it('stops idle workers above workersMin after idleTimeout, the longest idle first, never a busy one', () => {
    const a = worker({ idleMs: 6000 });
    const b = worker({ idleMs: 9000 });
    const c = worker({ idleMs: 1000 });
    const busy = worker({ jobs: 2, idleMs: 60_000 });
    const d = run({ workersMin: 1, workersMax: 4, idleTimeout: 5 }, {}, [a, b, c, busy]);
    expect(d.start).toBe(0);
    expect(d.stop).toEqual([
      { id: b.id, reason: 'idle' },
      { id: a.id, reason: 'idle' },
    ]);
    expect(run({ workersMin: 0, idleTimeout: 5 }, {}, [busy]).stop).toEqual([]);
  });

  it('stops idle workers at once when above workersMax', () => {
    const ws = [worker({ idleMs: 10 }), worker({ idleMs: 20 }), worker({ jobs: 1 })];
    const d = run({ workersMin: 0, workersMax: 1 }, {}, ws);
    expect(d.stop.map((s) => s.reason)).toEqual(['over-max', 'over-max']);
  });

  it('replaces unhealthy, outdated (once free) and stopPod workers', () => {
    const sick = worker({ state: 'unhealthy', jobs: 1 });
    const old = worker({ version: 1 });
    const oldBusy = worker({ version: 1, jobs: 1 });
    const refresh = worker({ stopRequested: true });
    const d = run({ workersMin: 3, workersMax: 3, version: 2 }, {}, [sick, old, oldBusy, refresh]);
    expect(d.stop).toEqual([
      { id: sick.id, reason: 'unhealthy' },
      { id: old.id, reason: 'outdated' },
      { id: refresh.id, reason: 'stop-requested' },
    ]);
    // the busy outdated worker still counts, so the release stays within workersMax
    expect(d.start).toBe(2);
  });

  it('ignores external workers for workersMin/Max and never stops them', () => {
    const ext = worker({ managed: false, idleMs: 60_000 });
    expect(run({ workersMin: 1 }, {}, [ext])).toMatchObject({ start: 1, stop: [] });
    // but an idle external worker covers a queued job: no scale-from-zero for it
    expect(run({}, { queued: 1, oldestWaitMs: 0 }, [ext])).toMatchObject({ start: 0 });
  });

  it('does not start during a back-off, but still stops', () => {
    const sick = worker({ state: 'unhealthy' });
    expect(run({ workersMin: 2 }, { queued: 3, oldestWaitMs: 9000 }, [sick], true)).toMatchObject({
      start: 0,
      stop: [{ id: sick.id, reason: 'unhealthy' }],
    });
  });
});

describe('startBackoffMs', () => {
  it('doubles from 2 s up to 5 minutes', () => {
    expect([1, 2, 3, 4].map((n) => startBackoffMs(n))).toEqual([2000, 4000, 8000, 16_000]);
    expect(startBackoffMs(30)).toBe(300_000);
  });

  it('starts from the configured first back-off (RUNPLANE_WORKER_START_BACKOFF_MS)', () => {
    expect([1, 2, 3].map((n) => startBackoffMs(n, 5000))).toEqual([5000, 10_000, 20_000]);
    expect(startBackoffMs(12, 5000)).toBe(300_000);
  });
});

describe('workerEnv (the RUNPOD_* environment of a managed worker)', () => {
  it('bakes the worker id into every URL and leaves $ID for the job id', () => {
    const env = workerEnv({
      baseUrl: 'http://127.0.0.1:8080/',
      endpointId: 'ep1',
      workerId: 'w1',
      gpu: 'NVIDIA GeForce RTX 4090',
      apiKey: 'k',
      pingIntervalMs: 10_000,
    });
    expect(env).toEqual({
      RUNPOD_WEBHOOK_GET_JOB:
        'http://127.0.0.1:8080/v2/ep1/job-take/w1?gpu=NVIDIA+GeForce+RTX+4090',
      RUNPOD_WEBHOOK_POST_OUTPUT:
        'http://127.0.0.1:8080/v2/ep1/job-done/w1/$ID?gpu=NVIDIA+GeForce+RTX+4090',
      RUNPOD_WEBHOOK_POST_STREAM:
        'http://127.0.0.1:8080/v2/ep1/job-stream/w1/$ID?gpu=NVIDIA+GeForce+RTX+4090',
      RUNPOD_WEBHOOK_PING: 'http://127.0.0.1:8080/v2/ep1/ping/w1?gpu=NVIDIA+GeForce+RTX+4090',
      RUNPOD_POD_ID: 'w1',
      RUNPOD_ENDPOINT_ID: 'ep1',
      RUNPOD_AI_API_KEY: 'k',
      RUNPOD_PING_INTERVAL: '10000',
      RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true',
    });
    expect(gpuLabel('CPU', ['x'])).toBe('CPU');
    expect(gpuLabel('GPU', [])).toBe('ANY');
  });
});
