import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createWorker, type Handler, type Worker, type WorkerOptions } from '../src/index.js';
import { FakeRunplane } from './fake-runplane.js';

/** A promise resolved from outside: lets a handler wait for the test without timing. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe('worker protocol against a fake Runplane', () => {
  let fake: FakeRunplane;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  beforeEach(async () => {
    fake = await new FakeRunplane().start();
  });
  afterEach(async () => {
    worker?.stop();
    await running;
    worker = undefined;
    running = undefined;
    await fake.close();
  });

  const launch = (
    handler: Handler,
    options: Partial<WorkerOptions> = {},
    env: Record<string, string> = {},
  ) => {
    worker = createWorker({ handler, env: fake.env(env), ...options });
    running = worker.run();
    return worker;
  };

  it('takes a job and posts its output exactly as runpod-python does', async () => {
    launch(async (job) => ({ echoed: job.input.echo, id: job.id }));
    fake.push({ id: 'job-1', input: { echo: 'héllo' }, webhook: 'http://hook' });
    const done = await fake.until(() => fake.finals('job-1')[0], 'job-done');

    const take = fake.of('job-take')[0];
    expect(take.method).toBe('GET');
    expect(take.url).toBe('/v2/ep-1/job-take/wk-1?gpu=NVIDIA+RTX+4090&job_in_progress=0');
    expect(take.headers.authorization).toBe('raw-worker-key'); // raw key, no "Bearer"

    expect(done.method).toBe('POST');
    expect(done.url).toBe('/v2/ep-1/job-done/wk-1/job-1?gpu=NVIDIA+RTX+4090&isStream=false');
    expect(done.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(done.headers['x-request-id']).toBe('job-1');
    expect(done.headers.authorization).toBe('raw-worker-key');
    expect(JSON.parse(done.rawBody)).toEqual({ output: { echoed: 'héllo', id: 'job-1' } });
  });

  it('hands the job over exactly as received and reports errors as FAILED bodies', async () => {
    const seen: unknown[] = [];
    launch(async (job) => {
      seen.push(job);
      if (job.input.mode === 'return-error') return { error: 'bad input' };
      if (job.input.mode === 'throw') throw new RangeError('exploded');
      if (job.input.mode === 'refresh') return { refresh_worker: true, fine: 1 };
      return undefined;
    });
    fake.push(
      { id: 'j-err', input: { mode: 'return-error' }, policy: { ttl: 20000 }, extra: 1 },
      { id: 'j-throw', input: { mode: 'throw' } },
      { id: 'j-refresh', input: { mode: 'refresh' } },
      { id: 'j-none', input: {} },
    );
    await fake.until(() => fake.finals('j-none').length, 'the last job');
    expect(seen[0]).toEqual({
      id: 'j-err',
      input: { mode: 'return-error' },
      policy: { ttl: 20000 },
      extra: 1,
    });
    expect(fake.finals('j-err')[0].body).toEqual({ error: 'bad input' });
    const thrown = fake.finals('j-throw')[0].body;
    expect(Object.keys(thrown)).toEqual(['error']);
    expect(JSON.parse(thrown.error)).toMatchObject({
      error_type: 'RangeError',
      error_message: 'exploded',
      worker_id: 'wk-1',
    });
    expect(fake.finals('j-refresh')[0].body).toEqual({ output: { fine: 1 }, stopPod: true });
    expect(fake.finals('j-none')[0].body).toEqual({ output: null });
  });

  it('streams generator items to job-stream, then posts the final result with isStream=true', async () => {
    launch(async function* (job) {
      for (let i = 0; i < job.input.n; i++) yield { i };
      if (job.input.failAt !== undefined) yield { error: `failed at ${job.input.failAt}` };
      yield { never: 'streamed' };
    });
    fake.push({ id: 's-1', input: { n: 3 } }, { id: 's-2', input: { n: 1, failAt: 1 } });
    await fake.until(() => fake.finals('s-2').length, 'both streams');

    const chunks = fake.of('job-stream').filter((r) => r.jobId === 's-1');
    expect(chunks.map((r) => r.url)).toEqual(
      Array(4).fill('/v2/ep-1/job-stream/wk-1/s-1?gpu=NVIDIA+RTX+4090&isStream=false'),
    );
    expect(chunks.map((r) => r.body)).toEqual([
      { output: { i: 0 } },
      { output: { i: 1 } },
      { output: { i: 2 } },
      { output: { never: 'streamed' } },
    ]);
    expect(chunks[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
    const [final] = fake.finals('s-1');
    expect(final.url).toBe('/v2/ep-1/job-done/wk-1/s-1?gpu=NVIDIA+RTX+4090&isStream=true');
    expect(final.body).toEqual({ output: [] });

    // An item with an error ends the stream: it is not streamed, and the job fails.
    expect(
      fake
        .of('job-stream')
        .filter((r) => r.jobId === 's-2')
        .map((r) => r.body),
    ).toEqual([{ output: { i: 0 } }]);
    expect(fake.finals('s-2')[0].body).toEqual({ error: 'failed at 1' });
  });

  it('returns every streamed item as the final output with returnAggregateStream, also for sync generators', async () => {
    launch(
      function* () {
        yield 'a';
        yield 'b';
      },
      { returnAggregateStream: true },
    );
    fake.push({ id: 'agg', input: {} });
    const final = await fake.until(() => fake.finals('agg')[0], 'the final post');
    expect(final.body).toEqual({ output: ['a', 'b'] });
    expect(final.query.get('isStream')).toBe('true');
  });

  it('posts progress updates to job-done before the final result', async () => {
    launch(async (_job, ctx) => {
      void ctx.progress({ pct: 10 }); // not awaited: still lands before the result
      await ctx.progress({ pct: 90 });
      return 'finished';
    });
    fake.push({ id: 'p-1', input: {} });
    await fake.until(() => fake.finals('p-1').length, 'the result');
    const posts = fake.of('job-done').filter((r) => r.jobId === 'p-1');
    expect(posts.map((r) => r.body)).toEqual([
      { status: 'IN_PROGRESS', output: { pct: 10 } },
      { status: 'IN_PROGRESS', output: { pct: 90 } },
      { output: 'finished' },
    ]);
    expect(posts.every((r) => r.query.get('isStream') === 'false')).toBe(true);
  });

  it('takes batches when concurrency > 1, runs them at once and says a job is in progress', async () => {
    const allStarted = gate();
    const release = gate();
    let started = 0;
    launch(
      async (job) => {
        if (++started === 3) allStarted.open();
        await release.promise;
        return job.id;
      },
      { concurrency: 3 },
    );
    await fake.until(() => fake.of('job-take-batch').length, 'a batch take');
    fake.push({ id: 'b-1', input: {} }, { id: 'b-2', input: {} }, { id: 'b-3', input: {} });
    await allStarted.promise; // all three handlers run together
    expect(fake.of('job-take-batch')[0].url).toBe(
      '/v2/ep-1/job-take-batch/wk-1?gpu=NVIDIA+RTX+4090&batch_size=3&job_in_progress=0',
    );
    expect(worker!.jobsInProgress.sort()).toEqual(['b-1', 'b-2', 'b-3']);
    release.open();
    await fake.until(
      () => ['b-1', 'b-2', 'b-3'].every((id) => fake.finals(id).length),
      'three results',
    );
    fake.push({ id: 'b-4', input: {} });
    await fake.until(() => fake.finals('b-4').length, 'a fourth job');
    expect(fake.finals('b-4')[0].body).toEqual({ output: 'b-4' });
  });

  describe('under load (fewer than half the slots free)', () => {
    const takes = () => fake.requests.filter((r) => r.route.startsWith('job-take'));
    const finish = new Map<string, () => void>();
    // The worker stops only once its jobs are done: whatever a test left running finishes here.
    afterEach(() => {
      for (const done of finish.values()) done();
      finish.clear();
    });

    /** A worker with four slots, all four running jobs that finish when told to. */
    async function fourBusy(options: Partial<WorkerOptions>) {
      const allStarted = gate();
      launch(
        (job) =>
          new Promise((resolve) => {
            finish.set(job.id, () => resolve(job.id));
            if (finish.size === 4) allStarted.open();
          }),
        { concurrency: 4, ...options },
        { RUNPOD_PING_INTERVAL: '20' },
      );
      await fake.until(() => fake.of('job-take-batch').length, 'the first take');
      fake.push(...['j-1', 'j-2', 'j-3', 'j-4'].map((id) => ({ id, input: {} })));
      await allStarted.promise;
      return (id: string) => {
        finish.get(id)!();
        finish.delete(id);
      };
    }

    it('lets a freed slot wait for another: one take fetches both jobs', async () => {
      const finishJob = await fourBusy({ takeGatherMs: 600_000 });
      const before = takes().length;
      finishJob('j-1');
      await fake.until(() => worker!.jobsInProgress.length === 3, 'the first slot free');
      // Two pings sent after the slot freed: a take made at once would have come before them.
      const freed = fake.requests.length;
      await fake.until(
        () => fake.requests.slice(freed).filter((r) => r.route === 'ping').length >= 2,
        'two pings',
      );
      expect(takes().length).toBe(before);
      finishJob('j-2');
      const gathered = await fake.until(() => takes()[before], 'the gathered take');
      expect(gathered.url).toBe(
        '/v2/ep-1/job-take-batch/wk-1?gpu=NVIDIA+RTX+4090&batch_size=2&job_in_progress=1',
      );
    });

    it('takes for a single freed slot once the gather time has passed', async () => {
      const finishJob = await fourBusy({ takeGatherMs: 20 });
      const before = takes().length;
      finishJob('j-1');
      const single = await fake.until(() => takes()[before], 'a take for the one free slot');
      expect(single.url).toBe('/v2/ep-1/job-take/wk-1?gpu=NVIDIA+RTX+4090&job_in_progress=1');
    });
  });

  it('refuses a takeGatherMs that is not a number of milliseconds', () => {
    for (const takeGatherMs of [-1, Number.NaN, Infinity, '5' as unknown as number])
      expect(() => createWorker({ handler: () => 1, env: fake.env(), takeGatherMs })).toThrow(
        /takeGatherMs must be a number of milliseconds/,
      );
  });

  it('sends job_in_progress=1 while a job runs and pings with the ids of the jobs in progress', async () => {
    const release = gate();
    launch(
      async () => {
        await release.promise;
        return 1;
      },
      { concurrency: 2 },
      { RUNPOD_PING_INTERVAL: '100' },
    );
    fake.push({ id: 'long-1', input: {} });
    // Concurrency 2 with one job running: one more job wanted, so a single take (not a batch).
    const take = await fake.until(
      () => fake.of('job-take').find((r) => r.query.get('job_in_progress') === '1'),
      'a take with a job in progress',
    );
    expect(take.url).toBe('/v2/ep-1/job-take/wk-1?gpu=NVIDIA+RTX+4090&job_in_progress=1');
    expect(fake.of('job-take-batch')[0].url).toBe(
      '/v2/ep-1/job-take-batch/wk-1?gpu=NVIDIA+RTX+4090&batch_size=2&job_in_progress=0',
    );
    const ping = await fake.until(
      () => fake.of('ping').find((r) => r.query.get('job_id') === 'long-1'),
      'a ping listing the job',
    );
    expect(ping.method).toBe('GET');
    expect(ping.url).toMatch(
      /^\/v2\/ep-1\/ping\/wk-1\?gpu=NVIDIA\+RTX\+4090&job_id=long-1&runpod_version=[\d.]+$/,
    );
    expect(ping.headers.authorization).toBe('raw-worker-key');
    release.open();
    await fake.until(() => fake.finals('long-1').length, 'the result');
    const after = fake.requests.indexOf(fake.finals('long-1')[0]);
    await fake.until(
      () => fake.requests.slice(after).find((r) => r.route === 'ping' && !r.query.has('job_id')),
      'a ping without jobs',
    );
  });

  it('abandons a job stopped on job-stop: its signal fires, nothing is posted, the slot is free again', async () => {
    const aborted = gate<unknown>();
    const started = gate();
    launch(async (job, ctx) => {
      if (job.input.wait) {
        started.open();
        ctx.signal.addEventListener('abort', () => aborted.open(ctx.signal.aborted));
        await new Promise(() => {}); // never finishes by itself
      }
      return 'next one ran';
    });
    fake.push({ id: 'stuck', input: { wait: true } });
    await started.promise;
    await fake.until(() => fake.of('job-stop').length, 'a job-stop poll');
    expect(fake.of('job-stop')[0].url).toBe('/v2/ep-1/job-stop/wk-1?gpu=NVIDIA+RTX+4090');
    expect(fake.of('job-stop')[0].headers.authorization).toBe('raw-worker-key');
    fake.stop('stuck', 'unknown-job');
    expect(await aborted.promise).toBe(true);
    fake.push({ id: 'after', input: {} });
    await fake.until(() => fake.finals('after').length, 'the next job');
    expect(fake.finals('after')[0].body).toEqual({ output: 'next one ran' });
    expect(fake.of('job-done').filter((r) => r.jobId === 'stuck')).toEqual([]);
  });

  it('stops gracefully: no more takes, the job in progress finishes and is posted, then run() resolves', async () => {
    const started = gate();
    const release = gate();
    launch(async () => {
      started.open();
      await release.promise;
      return 'drained';
    });
    fake.push({ id: 'g-1', input: {} });
    await started.promise;
    worker!.stop();
    const takes = fake.of('job-take').length;
    fake.push({ id: 'g-2', input: {} }); // must not be taken
    release.open();
    await running;
    expect(fake.finals('g-1')[0].body).toEqual({ output: 'drained' });
    expect(fake.of('job-take').length).toBe(takes);
    expect(fake.finals('g-2')).toEqual([]);
  });

  it('with refreshWorker, marks the result stopPod and stops after the job', async () => {
    launch(async () => 'once', { refreshWorker: true });
    fake.push({ id: 'r-1', input: {} });
    await running;
    expect(fake.finals('r-1')[0].body).toEqual({ output: 'once', stopPod: true });
  });

  it('drops a job-take answer that is not application/json, as runpod-python does', async () => {
    const ran: string[] = [];
    fake.nextTake = (res) =>
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(JSON.stringify({ id: 'dropped', input: {} }));
    launch(async (job) => {
      ran.push(job.id);
      return null;
    });
    await fake.until(() => fake.of('job-take').length >= 2, 'a second take');
    fake.push({ id: 'kept', input: {} });
    await fake.until(() => fake.finals('kept').length, 'the next job');
    expect(ran).toEqual(['kept']);
  });

  it('retries a result post on 5xx and not on 4xx', async () => {
    fake.failPosts('x-5xx', 503);
    fake.failPosts('x-4xx', 404);
    launch(async (job) => job.id);
    fake.push({ id: 'x-5xx', input: {} }, { id: 'x-4xx', input: {} }, { id: 'x-last', input: {} });
    await fake.until(() => fake.finals('x-last').length, 'the last job');
    expect(fake.finals('x-5xx').map((r) => r.body)).toEqual([
      { output: 'x-5xx' },
      { output: 'x-5xx' },
    ]);
    expect(fake.finals('x-4xx')).toHaveLength(1);
  });
});
