import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { InProcessBus } from '@runplane/bus';
import { SchedulerSignals } from '@runplane/contracts';
import { createLogger, type ReadinessService } from '@runplane/platform';
import { JobChanges } from '../src/shared/job-changes.js';

/** 'woken' when the wait ends within 2 s (its own timeout is 30 s), else 'still waiting'. */
async function outcome(p: Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((r) => { timer = setTimeout(() => r('still waiting'), 2000); });
  try {
    return await Promise.race([p.then(() => 'woken'), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('JobChanges (long-poll wake-ups)', () => {
  const bus = new InProcessBus();
  const made: JobChanges[] = [];
  const changes = (readiness?: { isDraining: boolean }) => {
    const c = new JobChanges(bus, createLogger({ level: 'silent' }), readiness as ReadinessService | undefined);
    made.push(c);
    return c;
  };
  afterEach(() => made.splice(0).forEach((c) => c.onModuleDestroy()));
  afterAll(() => bus.close());

  it('wakes waiters of the changed job and endpoint-wide waiters, not others', async () => {
    const c = changes();
    const job = c.wait('ep1', 'j1', 30_000);
    const any = c.wait('ep1', undefined, 30_000);
    const otherJob = c.wait('ep1', 'j2', 30_000);
    const otherEndpoint = c.wait('ep2', undefined, 30_000);
    c.changed('ep1', 'j1');
    expect(await Promise.all([outcome(job), outcome(any), outcome(otherJob), outcome(otherEndpoint)]))
      .toEqual(['woken', 'woken', 'still waiting', 'still waiting']);
  });

  it('does not miss a change that happened between the caller\'s read and its wait', async () => {
    const c = changes();
    const mark = c.mark('ep1');
    c.changed('ep1', 'j1'); // lands while the caller reads the database
    expect(await outcome(c.wait('ep1', undefined, 30_000, mark))).toBe('woken');
    expect(await outcome(c.wait('ep1', undefined, 30_000, c.mark('ep1')))).toBe('still waiting');
  });

  it('tells other replicas through the jobChanged signal', async () => {
    const received: unknown[] = [];
    await bus.onSignal(SchedulerSignals.jobChanged, (p) => { received.push(p); });
    changes().changed('ep9', 'j9');
    await new Promise((r) => setTimeout(r, 50));
    expect(received).toContainEqual({ endpointId: 'ep9', jobId: 'j9' });
  });

  it('answers held polls when the process starts draining', async () => {
    const readiness = { isDraining: false };
    const c = changes(readiness);
    const held = c.wait('ep1', undefined, 30_000);
    readiness.isDraining = true;
    expect(await outcome(held)).toBe('woken');
    expect(c.stopping).toBe(true);
  });

  it('runs scaling listeners only for changes that may need other workers', () => {
    const c = changes();
    const seen: string[] = [];
    c.onChange((ep) => seen.push(ep));
    c.changed('ep1', 'j1');
    c.changed('ep2', 'j2', true);
    expect(seen).toEqual(['ep2']);
  });
});
