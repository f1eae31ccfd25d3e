import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { SchedulerRpc } from '@runplane/contracts';
import { JobQueriesRepository } from '../src/store/job-queries.repository.js';
import { OWNER, sleep, startHarness, until, type Harness } from './support.js';

// Ticks come from pokes only here (the periodic tick is a minute away): what makes a poke run one.
describe('autoscaler pokes', () => {
  let h: Harness;
  let ticks: ReturnType<typeof jest.spyOn>;
  beforeAll(async () => {
    // A settled window far longer than the test: a slow machine cannot make it lapse mid-test.
    h = await startHarness({
      RUNPLANE_AUTOSCALE_INTERVAL_MS: '60000',
      RUNPLANE_AUTOSCALE_SETTLED_MS: '60000',
    });
    // Every tick reads the queue statistics once.
    ticks = jest.spyOn(h.server.app.get(JobQueriesRepository, { strict: false }), 'queueStats');
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('new jobs on an endpoint that may start no worker run no tick; a configuration change does', async () => {
    const ep = await h.endpoint({ workersMin: 0, workersMax: 0 });
    await until(async () => ticks.mock.calls.length > 0, 10_000, 'the tick of the new endpoint'); // creation pokes
    // Creation may have poked twice (a tick then runs again): wait until no tick came for 1 s.
    let before: number;
    do {
      before = ticks.mock.calls.length;
      await sleep(1000);
    } while (ticks.mock.calls.length !== before);
    for (let i = 0; i < 10; i++) {
      await h.submit(ep);
      await sleep(60); // longer than the poke delay
    }
    await sleep(300);
    expect(ticks.mock.calls.length).toBe(before);
    await h.call(SchedulerRpc.updateEndpoint, {
      ownerId: OWNER,
      endpointId: ep,
      changes: { workersMax: 1 } as never,
    });
    await until(async () => ticks.mock.calls.length > before, 10_000, 'the tick after the change');
  }, 90_000);
});
