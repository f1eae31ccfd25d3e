import { afterAll, describe, expect, it } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { defineEvent, defineRpc } from '@runplane/contracts';
import { NATS_URL, requireService, uniqueName } from '@runplane/test-support';
import type { DeliveredEvent } from '../src/bus.js';
import { durableName, NatsBus } from '../src/nats/nats-bus.js';
import { runBusContractSuite, type MakeBusOptions } from './contract-suite.js';

const natsUp = await requireService('nats', 'bus contract suite on NATS');
// Every test run gets its own namespace: subjects, stream, consumers and bucket of its own.
const namespace = uniqueName('bustest');
const stream = `${namespace.toUpperCase()}_EVENTS`;
const bucket = `${namespace}_blobs`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Removes what the tests left on the shared server. */
async function deleteNamespace(): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [stream, `OBJ_${bucket}`]) await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}

const makeBus = ({ logger }: MakeBusOptions = {}) =>
  NatsBus.connect({ servers: NATS_URL, namespace, name: 'bus-contract-test', logger });

if (natsUp) {
  afterAll(deleteNamespace);

  // Every bus of the run shares the namespace, so a "restart" is simply another bus.
  runBusContractSuite('NatsBus', makeBus, { sharedNetwork: true });

  describe('NatsBus specifics', () => {
    const open: NatsBus[] = [];
    const make = async () => {
      const bus = await makeBus();
      open.push(bus);
      return bus;
    };
    afterAll(async () => {
      await Promise.all(open.map((b) => b.close()));
    });

    it('names JetStream objects after the namespace and provisions every group on first publish', async () => {
      const bus = await make();
      expect(bus.resources).toEqual({ namespace, stream, blobBucket: bucket });
      const evt = defineEvent<object>({
        name: 'specific.provisioned',
        version: 2,
        producer: 'scheduler',
        consumers: ['queue-api', 'webhook-sender'],
      });
      await bus.publish(evt, {});
      const jsm = await jetstreamManager(bus.connection);
      const info = await jsm.streams.info(stream);
      expect(info.config.subjects).toEqual([`${namespace}.runplane.evt.>`]);
      expect(info.state.messages).toBeGreaterThan(0);
      for (const group of evt.consumers) {
        const ci = await jsm.consumers.info(stream, durableName(evt, group));
        expect(ci.name).toBe(`${group}__specific_provisioned_v2`);
        expect(ci.config.filter_subject).toBe(`${namespace}.${evt.subject}`);
        expect(ci.num_pending).toBe(1);
      }
    });

    it('deletes claim-checked request and reply payloads once read', async () => {
      const bus = await make();
      const rpc = defineRpc<{ data: string }, { data: string }>('scheduler', 'specific.bigecho');
      await bus.serve(rpc, async (req) => req);
      const data = 'z'.repeat(2 * 1024 * 1024);
      expect((await bus.request(rpc, { data })).data.length).toBe(data.length);
      const store = await new Objm(bus.connection).open(bucket);
      await waitFor(
        'request and reply objects to go',
        async () => (await store.list()).filter((o) => o.name.startsWith('rpc.')).length === 0,
      );
    });

    it('keeps consuming and serving across a reconnect', async () => {
      const bus = await make();
      const producer = await make();
      const evt = defineEvent<{ n: number }>({
        name: 'specific.reconnect',
        version: 1,
        producer: 'scheduler',
        consumers: ['queue-api'],
      });
      const rpc = defineRpc<object, string>('scheduler', 'specific.reconnect');
      const got: DeliveredEvent<{ n: number }>[] = [];
      await bus.consume(evt, 'queue-api', async (e) => void got.push(e));
      await bus.serve(rpc, async () => 'pong');
      await producer.publish(evt, { n: 1 });
      await waitFor('the first event', () => got.length === 1);

      // Wait for the reconnect itself: an event sent while the old socket is being torn down may go to
      // the dead pull request and only come back after ack_wait (30 s), which is correct but slow.
      const reconnected = (async () => {
        for await (const s of bus.connection.status()) if (s.type === 'reconnect') return;
      })();
      await bus.connection.reconnect();
      await reconnected;
      expect(bus.isReady()).toBe(true);
      await producer.publish(evt, { n: 2 });
      await waitFor('an event after the reconnect', () => got.length === 2, 10_000);
      await waitFor(
        'the server to answer after the reconnect',
        async () => (await producer.request(rpc, {}).catch(() => 'no')) === 'pong',
      );
    }, 20_000);
  });
} else {
  describe.skip('NatsBus (NATS unreachable)', () => {
    it('runs the contract suite against a real NATS server', () => {});
  });
}
