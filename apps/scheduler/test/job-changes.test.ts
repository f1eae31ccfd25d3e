import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { InProcessBus } from '@runplane/bus';
import { SchedulerSignals } from '@runplane/contracts';
import { createLogger, type ReadinessService } from '@runplane/platform';
import { JobChanges } from '../src/shared/job-changes.js';
import { WorkersBusController } from '../src/workers/workers.bus-controller.js';
import { WorkerRelay } from '../src/workers/worker-relay.js';

/** 'woken' when the wait ends within 2 s (its own timeout is 30 s), else 'still waiting'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((r) => {
    timer = setTimeout(() => r('still waiting'), 2000);
  });
  try {
    return await Promise.race([p.then(() => 'woken'), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('JobChanges (long-poll wake-ups)', () => {
  // Stands in for NATS: replicas of the scheduler exist only where the bus is a network one.
  const bus = new InProcessBus();
  Object.defineProperty(bus, 'kind', { value: 'nats' });
  const made: JobChanges[] = [];
  const changes = (readiness?: { isDraining: boolean }, on: InProcessBus = bus) => {
    const c = new JobChanges(
      on,
      createLogger({ level: 'silent' }),
      readiness as ReadinessService | undefined,
    );
    made.push(c);
    return c;
  };
  afterEach(() => made.splice(0).forEach((c) => c.onModuleDestroy()));
  afterAll(() => bus.close());

  it("a job's change wakes the polls of that job only", async () => {
    const c = changes();
    const job = c.waitForJob('ep1', 'j1', 30_000);
    const otherJob = c.waitForJob('ep1', 'j2', 30_000);
    const take = c.waitForWork('ep1', 'w', 30_000);
    const stop = c.waitForStops('ep1', 30_000);
    c.changed('ep1', 'j1');
    expect(
      await Promise.all([outcome(job), outcome(otherJob), outcome(take), outcome(stop)]),
    ).toEqual(['woken', 'still waiting', 'still waiting', 'still waiting']);
  });

  it('a queued job wakes one waiting job-take, the oldest; n queued jobs wake n', async () => {
    const c = changes();
    const order: number[] = [];
    const takes = [0, 1, 2, 3].map((i) =>
      c.waitForWork('ep1', 'w', 30_000).then(() => {
        order.push(i);
      }),
    );
    c.changed('ep1', 'j1', { queued: 1 });
    expect(await outcome(takes[0])).toBe('woken');
    expect(await outcome(takes[1])).toBe('still waiting');
    c.changed('ep1', 'j2', { queued: 2 });
    expect(await Promise.all([outcome(takes[1]), outcome(takes[2]), outcome(takes[3])])).toEqual([
      'woken',
      'woken',
      'still waiting',
    ]);
    expect(order).toEqual([0, 1, 2]);
  });

  it("written stops wake the endpoint's job-stop polls", async () => {
    const c = changes();
    const stops = [c.waitForStops('ep1', 30_000), c.waitForStops('ep1', 30_000)];
    const take = c.waitForWork('ep1', 'w', 30_000);
    c.changed('ep1', 'j1', { stops: true });
    expect(await Promise.all([...stops, take].map(outcome))).toEqual([
      'woken',
      'woken',
      'still waiting',
    ]);
  });

  it('an endpoint-wide change wakes every poll of the endpoint, not those of others', async () => {
    const c = changes();
    const polls = [
      c.waitForJob('ep1', 'j1', 30_000),
      c.waitForWork('ep1', 'w', 30_000),
      c.waitForWork('ep1', 'w', 30_000),
      c.waitForStops('ep1', 30_000),
    ];
    const otherEndpoint = [c.waitForWork('ep2', 'w', 30_000), c.waitForJob('ep2', 'j1', 30_000)];
    c.changed('ep1');
    expect(await Promise.all(polls.map(outcome))).toEqual(['woken', 'woken', 'woken', 'woken']);
    expect(await Promise.all(otherEndpoint.map(outcome))).toEqual([
      'still waiting',
      'still waiting',
    ]);
  });

  it("does not miss a change that happened between the caller's read and its wait", async () => {
    const c = changes();
    let mark = c.mark();
    c.changed('ep1', 'j1', { queued: 1 }); // lands while the callers read the database
    expect(await outcome(c.waitForJob('ep1', 'j1', 30_000, mark))).toBe('woken');
    expect(await outcome(c.waitForWork('ep1', 'w', 30_000, mark))).toBe('woken');
    expect(await outcome(c.waitForJob('ep1', 'j2', 30_000, mark))).toBe('still waiting');
    expect(await outcome(c.waitForStops('ep1', 30_000, mark))).toBe('still waiting');
    mark = c.mark();
    c.changed('ep1'); // endpoint-wide: every kind of poll looks again
    expect(await outcome(c.waitForStops('ep1', 30_000, mark))).toBe('woken');
    expect(await outcome(c.waitForWork('ep1', 'w', 30_000, c.mark()))).toBe('still waiting');
  });

  it('tells other replicas through the jobChanged signal, and they wake their polls', async () => {
    const received: unknown[] = [];
    await bus.onSignal(SchedulerSignals.jobChanged, (p) => {
      received.push(p);
    });
    const here = changes();
    const there = changes();
    await bus.onSignal(SchedulerSignals.jobChanged, (p) => {
      there.received(p);
      here.received(p);
    });
    const remoteTake = there.waitForWork('ep9', 'w', 30_000);
    const localTakes = [here.waitForWork('ep9', 'w', 30_000), here.waitForWork('ep9', 'w', 30_000)];
    here.changed('ep9', 'j9', { queued: 1, stops: true });
    here.changed('ep9', 'j10'); // the same turn of the event loop: one message
    const ours = () => received.filter((s) => JSON.stringify(s).includes('ep9'));
    for (let i = 0; i < 100 && ours().length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50)); // a second message, were there one, would be here by now
    const mine = ours();
    expect(mine).toEqual([
      {
        origin: expect.any(String),
        changes: [
          { endpointId: 'ep9', jobId: 'j9', queued: 1, stops: true },
          { endpointId: 'ep9', jobId: 'j10' },
        ],
      },
    ]);
    expect(await outcome(remoteTake)).toBe('woken');
    // Its own signal came back to `here` too, and was ignored: one new job, one local taker woken.
    expect(await Promise.all(localTakes.map(outcome))).toEqual(['woken', 'still waiting']);
  });

  it('sends no signal on the in-process bus, which serves the only scheduler there is', async () => {
    const single = new InProcessBus();
    const received: unknown[] = [];
    await single.onSignal(SchedulerSignals.jobChanged, (p) => {
      received.push(p);
    });
    const c = changes(undefined, single);
    const take = c.waitForWork('ep8', 'w', 30_000);
    c.changed('ep8', 'j8', { queued: 1 });
    expect(await outcome(take)).toBe('woken');
    await single.signal(SchedulerSignals.jobChanged, { origin: 'probe', changes: [] });
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(received).toEqual([{ origin: 'probe', changes: [] }]);
    await single.close();
  });

  it('the signal handler takes batched changes, and the single change an older replica sends; garbage is ignored', async () => {
    const c = changes();
    const controller = new WorkersBusController({} as never, c, new WorkerRelay());
    const takes = [c.waitForWork('ep7', 'w', 30_000), c.waitForWork('ep7', 'w', 30_000)];
    const stop = c.waitForStops('ep7', 30_000);
    controller.jobChanged({
      origin: 'other',
      changes: [{ endpointId: 'ep7', jobId: 'j1', queued: 1 }, { bad: true } as never],
    });
    expect(await Promise.all(takes.map(outcome))).toEqual(['woken', 'still waiting']);
    controller.jobChanged({ endpointId: 'ep7', jobId: 'j2', stops: true } as never);
    expect(await outcome(stop)).toBe('woken');
    controller.jobChanged(null as never);
    controller.jobChanged({ changes: 'nope' } as never);
  });

  it('handOff takes the oldest waiting job-take out of the waiters: it gets the jobs given, or looks itself when declined', async () => {
    const c = changes();
    expect(c.handOff('ep1')).toBeUndefined();
    const first = c.waitForWork<string>('ep1', 'w1', 30_000);
    const second = c.waitForWork<string>('ep1', 'w2', 30_000);
    const third = c.waitForWork<string>('ep1', 'w3', 30_000);
    const a = c.handOff<string>('ep1')!;
    const b = c.handOff<string>('ep1')!;
    expect([a.workerId, b.workerId]).toEqual(['w1', 'w2']);
    c.changed('ep1', 'j9', { queued: 1 }); // wakes the next one still waiting, not the handed-off ones
    expect(await outcome(third)).toBe('woken');
    expect(await third).toBeUndefined();
    a.give(['job-1']);
    b.decline();
    expect(await first).toEqual(['job-1']);
    expect(await second).toBeUndefined();
  });

  it("a job's waiters get its final state with the change that carried it", async () => {
    const c = changes();
    const waiting = c.waitForJob<{ status: string }>('ep1', 'j1', 30_000);
    const plain = c.waitForJob('ep1', 'j2', 30_000);
    c.changed('ep1', 'j1', { final: { status: 'COMPLETED' } });
    c.changed('ep1', 'j2');
    expect(await waiting).toEqual({ status: 'COMPLETED' });
    expect(await plain).toBeUndefined();
  });

  it('a worker whose claim found nothing is known idle until work is queued on the endpoint, or for maxAgeMs', async () => {
    const c = changes();
    const mark = c.mark();
    c.claimedNothing('ep1', 'w1', mark);
    expect(c.knownIdle('ep1', 'w1', 30_000)).toBe(true);
    expect(c.knownIdle('ep1', 'w2', 30_000)).toBe(false); // only the worker that claimed
    c.changed('ep1', 'j1'); // a result or progress: no new work
    c.changed('ep2', 'j2', { queued: 1 }); // work elsewhere
    expect(c.knownIdle('ep1', 'w1', 30_000)).toBe(true);
    c.changed('ep1', 'j3', { queued: 1 });
    expect(c.knownIdle('ep1', 'w1', 30_000)).toBe(false);

    c.claimedNothing('ep1', 'w1', c.mark());
    c.changed('ep1'); // endpoint-wide (requeues, releases, configuration)
    expect(c.knownIdle('ep1', 'w1', 30_000)).toBe(false);

    c.claimedNothing('ep1', 'w1', c.mark());
    await new Promise((r) => setTimeout(r, 30));
    expect(c.knownIdle('ep1', 'w1', 20)).toBe(false); // a lost signal of another replica costs at most maxAgeMs
  });

  it('announce: ended jobs wake their awaiters and job-stop polls; requeued jobs also wake as many job-takes', async () => {
    const c = changes();
    const takes = [
      c.waitForWork('ep1', 'w', 30_000),
      c.waitForWork('ep1', 'w', 30_000),
      c.waitForWork('ep1', 'w', 30_000),
    ];
    const stops = c.waitForStops('ep1', 30_000);
    const awaiter = c.waitForJob('ep1', 'j1', 30_000);
    c.announce([{ id: 'j1', endpointId: 'ep1' }], 'ended');
    expect(await Promise.all([awaiter, stops].map(outcome))).toEqual(['woken', 'woken']);
    expect(await outcome(takes[0])).toBe('still waiting');
    c.announce(
      [
        { id: 'j2', endpointId: 'ep1' },
        { id: 'j3', endpointId: 'ep1' },
      ],
      'requeued',
    );
    expect(await Promise.all(takes.map(outcome))).toEqual(['woken', 'woken', 'still waiting']);
  });

  it('a pause is cut short by draining only', async () => {
    const readiness = { isDraining: false };
    const c = changes(readiness);
    const paused = c.pause(30_000);
    c.changed('ep1');
    expect(await outcome(paused)).toBe('still waiting');
    readiness.isDraining = true;
    expect(await outcome(paused)).toBe('woken');
  });

  it('answers held polls when the process starts draining', async () => {
    const readiness = { isDraining: false };
    const c = changes(readiness);
    const held = c.waitForWork('ep1', 'w', 30_000);
    readiness.isDraining = true;
    expect(await outcome(held)).toBe('woken');
    expect(c.stopping).toBe(true);
  });

  it('runs scaling listeners only for changes that may need other workers', () => {
    const c = changes();
    const seen: string[] = [];
    c.onChange((ep) => seen.push(ep));
    c.changed('ep1', 'j1');
    c.changed('ep2', 'j2', { scaling: true });
    expect(seen).toEqual(['ep2']);
  });
});
