import { describe, expect, it } from '@jest/globals';
import { defineEvent } from '@runplane/contracts';
import { InProcessBus } from '../src/in-process/in-process-bus.js';
import { MemoryJournal } from '../src/in-process/journal.js';
import type { Bus } from '../src/bus.js';
import { runBusContractSuite } from './contract-suite.js';

// A "restart" is a new bus over the journal of the old one, as the standalone server does with its database.
const journals = new WeakMap<Bus, MemoryJournal>();

runBusContractSuite(
  'InProcessBus (MemoryJournal)',
  async ({ restartOf, logger } = {}) => {
    const journal = (restartOf && journals.get(restartOf)) || new MemoryJournal();
    const bus = new InProcessBus({ journal, logger });
    journals.set(bus, journal);
    return bus;
  },
  { sharedNetwork: false },
);

describe('InProcessBus specifics', () => {
  it('keeps dead letters in the journal and does not redeliver them after a restart', async () => {
    const journal = new MemoryJournal();
    const evt = defineEvent<object>({
      name: 'specific.dead',
      version: 1,
      producer: 'scheduler',
      consumers: ['queue-api'],
    });
    const bus = new InProcessBus({ journal });
    let calls = 0;
    await bus.consume(
      evt,
      'queue-api',
      async () => {
        calls += 1;
        throw new Error('nope');
      },
      { maxDeliver: 1 },
    );
    await bus.publish(evt, {}, { id: 'dead-1' });
    await new Promise((r) => setTimeout(r, 50));
    await bus.close();
    expect(calls).toBe(1);
    expect(journal.deadLetters()).toEqual([
      { eventId: 'dead-1', group: 'queue-api', error: 'nope' },
    ]);

    const restarted = new InProcessBus({ journal });
    await restarted.consume(evt, 'queue-api', async () => void (calls += 1));
    await restarted.publish(evt, {}, { id: 'dead-1' }); // still held, so still a duplicate
    await new Promise((r) => setTimeout(r, 50));
    await restarted.close();
    expect(calls).toBe(1);
  });
});
