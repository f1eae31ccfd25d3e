import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  context,
  isSpanContextValid,
  propagation,
  SpanKind,
  trace,
  type Context,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { defineEvent, defineRpc, defineSignal, RunplaneError } from '@runplane/contracts';
import type { Bus, DeliveredEvent } from '../src/bus.js';
import type { BusLogger } from '../src/logger.js';

export interface MakeBusOptions {
  /**
   * A bus the test has closed: the new bus takes over its durable state, as a restarted process
   * would (InProcessBus: the same journal instance; NatsBus: the same namespace).
   */
  restartOf?: Bus;
  logger?: BusLogger;
}

export type MakeBus = (opts?: MakeBusOptions) => Promise<Bus>;

export interface ContractSuiteOptions {
  /**
   * True when buses from separate makeBus() calls reach each other as separate processes would
   * (NATS). In-process buses are islands, so "another instance" is then the same bus.
   */
  sharedNetwork: boolean;
  /** Runs after the suite, once every bus it made is closed (delete streams, buckets...). */
  cleanup?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function recordingLogger(): BusLogger & { errors: string[]; warns: string[] } {
  const errors: string[] = [];
  const warns: string[] = [];
  return {
    errors,
    warns,
    warn: (obj, msg) => warns.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
    error: (obj, msg) => errors.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
  };
}

/** Enough of W3C trace context for the test; the real propagator comes with the platform's SDK setup. */
class TraceparentPropagator implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const sc = trace.getSpanContext(ctx);
    if (!sc || !isSpanContextValid(sc)) return;
    setter.set(
      carrier,
      'traceparent',
      `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 1).toString(16)}`,
    );
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const raw = getter.get(carrier, 'traceparent');
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(
      (Array.isArray(raw) ? raw[0] : raw) ?? '',
    );
    if (!m) return ctx;
    return trace.setSpanContext(ctx, {
      traceId: m[1],
      spanId: m[2],
      traceFlags: parseInt(m[3], 16),
      isRemote: true,
    });
  }

  fields(): string[] {
    return ['traceparent'];
  }
}

/** Registers an SDK tracer for this test file (each Jest file has its own globals). */
function installTestTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new TraceparentPropagator());
  return exporter;
}

let seq = 0;
/** Fresh names per test: durable consumers and queue groups of one test never see another's messages. */
const tag = () => `c${Date.now().toString(36)}${++seq}`;

const eventFor = <T>(consumers: string[] = ['queue-api', 'webhook-sender']) =>
  defineEvent<T>({ name: `contract.${tag()}`, version: 1, producer: 'scheduler', consumers });

/** A 5 MB string that is not one repeated byte, so corruption or truncation would show. */
function bigText(bytes = 5 * 1024 * 1024): string {
  const chunk = Array.from({ length: 1024 }, (_, i) =>
    String.fromCharCode(33 + ((i * 7) % 90)),
  ).join('');
  return chunk.repeat(Math.ceil(bytes / chunk.length)).slice(0, bytes);
}

/**
 * The behaviour every Bus implementation promises (see the Bus class). Run once per
 * implementation; each test makes its own buses through `makeBus` and the suite closes them.
 */
export function runBusContractSuite(
  label: string,
  makeBus: MakeBus,
  options: ContractSuiteOptions,
): void {
  describe(`Bus contract: ${label}`, () => {
    let exporter: InMemorySpanExporter;
    const open: Bus[] = [];
    const make = async (opts?: MakeBusOptions) => {
      const bus = await makeBus(opts);
      open.push(bus);
      return bus;
    };
    /** Another instance of the platform: a separate bus on a shared network, else the same bus. */
    const peerOf = async (bus: Bus) => (options.sharedNetwork ? make() : bus);

    beforeAll(() => {
      exporter = installTestTracing();
    });
    afterEach(async () => {
      await Promise.all(open.splice(0).map((b) => b.close()));
    });
    afterAll(async () => {
      await options.cleanup?.();
    });

    describe('requests', () => {
      it('round-trips a typed payload with headers', async () => {
        const bus = await make();
        const rpc = defineRpc<
          { text: string; n: number },
          { upper: string; twice: number; subject: string; custom?: string }
        >('scheduler', `${tag()}.echo`);
        await bus.serve(rpc, async (req, ctx) => ({
          upper: req.text.toUpperCase(),
          twice: req.n * 2,
          subject: ctx.subject,
          custom: ctx.headers['x-custom'],
        }));
        const res = await bus.request(
          rpc,
          { text: 'hi', n: 21 },
          { headers: { 'x-custom': 'yes' } },
        );
        expect(res).toEqual({ upper: 'HI', twice: 42, subject: rpc.subject, custom: 'yes' });
      });

      it('delivers a RunplaneError to the caller with status, message, details and code', async () => {
        const bus = await make();
        const rpc = defineRpc<object, never>('scheduler', `${tag()}.fail`);
        await bus.serve(rpc, async () => {
          throw new RunplaneError(
            409,
            'job already exists',
            [{ path: 'id', message: 'taken' }],
            'JOB_EXISTS',
          );
        });
        const err = await bus.request(rpc, {}).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RunplaneError);
        expect(err).toMatchObject({
          status: 409,
          message: 'job already exists',
          details: [{ path: 'id', message: 'taken' }],
          code: 'JOB_EXISTS',
        });
      });

      it('turns an unexpected throw into a 500 without leaking its message, and logs it', async () => {
        const logger = recordingLogger();
        const bus = await make({ logger });
        const rpc = defineRpc<object, never>('scheduler', `${tag()}.crash`);
        await bus.serve(rpc, async () => {
          throw new Error('secret connection string');
        });
        const err = (await bus.request(rpc, {}).catch((e: unknown) => e)) as RunplaneError;
        expect(err).toBeInstanceOf(RunplaneError);
        expect(err.status).toBe(500);
        expect(err.message).not.toContain('secret');
        expect(logger.errors.join('\n')).toContain('secret connection string');
      });

      it('answers 503 when no instance serves the request', async () => {
        const bus = await make();
        const rpc = defineRpc<object, never>('scheduler', `${tag()}.nobody`);
        await expect(bus.request(rpc, {})).rejects.toMatchObject({ status: 503 });
      });

      it('answers 504 when the reply does not come in time', async () => {
        const bus = await make();
        const rpc = defineRpc<object, string>('scheduler', `${tag()}.slow`);
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        await bus.serve(rpc, async () => {
          await gate;
          return 'late';
        });
        const started = Date.now();
        const err = (await bus
          .request(rpc, {}, { timeoutMs: 200 })
          .catch((e: unknown) => e)) as RunplaneError;
        release();
        expect(err).toBeInstanceOf(RunplaneError);
        expect(err.status).toBe(504);
        expect(err.message).toMatch(/within 200 ms/);
        expect(Date.now() - started).toBeLessThan(2000);
      });

      it('shares requests between replicas of the serving service', async () => {
        const client = await make();
        const replicaA = await peerOf(client);
        const replicaB = await peerOf(client);
        const rpc = defineRpc<object, string>('scheduler', `${tag()}.who`);
        await replicaA.serve(rpc, async () => 'a');
        await replicaB.serve(rpc, async () => 'b');
        const answers = await Promise.all(
          Array.from({ length: 40 }, () => client.request(rpc, {})),
        );
        expect(answers.filter((x) => x === 'a').length).toBeGreaterThan(0);
        expect(answers.filter((x) => x === 'b').length).toBeGreaterThan(0);
      });

      it('carries a 5 MB request and a 5 MB reply', async () => {
        const bus = await make();
        const big = bigText();
        const rpc = defineRpc<{ data: string }, { data: string; length: number }>(
          'scheduler',
          `${tag()}.big`,
        );
        await bus.serve(rpc, async (req) => ({
          data: req.data.toUpperCase(),
          length: req.data.length,
        }));
        const res = await bus.request(rpc, { data: big });
        expect(res.length).toBe(big.length);
        expect(res.data === big.toUpperCase()).toBe(true);
      });

      it('close() lets an in-flight request finish and answer', async () => {
        const server = await make();
        const client = await peerOf(server);
        const rpc = defineRpc<object, string>('scheduler', `${tag()}.closing`);
        let started = false;
        await server.serve(rpc, async () => {
          started = true;
          await sleep(300);
          return 'done';
        });
        const reply = client.request(rpc, {}, { timeoutMs: 5000 });
        await waitFor('the handler to start', () => started);
        await server.close();
        await expect(reply).resolves.toBe('done');
      });
    });

    describe('events', () => {
      it('reaches every declared group exactly once when handlers succeed', async () => {
        const bus = await make();
        const evt = eventFor<{ n: number }>();
        const seen: Record<string, DeliveredEvent<{ n: number }>[]> = {
          'queue-api': [],
          'webhook-sender': [],
        };
        for (const group of evt.consumers)
          await bus.consume(evt, group, async (e) => void seen[group].push(e));
        for (let n = 0; n < 5; n++)
          await bus.publish(evt, { n }, { headers: { 'x-origin': 'test' } });
        await waitFor(
          'both groups to get 5 events',
          () => seen['queue-api'].length >= 5 && seen['webhook-sender'].length >= 5,
        );
        await sleep(300);
        for (const group of evt.consumers) {
          const events = seen[group];
          expect(events).toHaveLength(5);
          expect(new Set(events.map((e) => e.id)).size).toBe(5);
          expect(events.map((e) => e.payload.n).sort()).toEqual([0, 1, 2, 3, 4]);
          for (const e of events) {
            expect(e).toMatchObject({ subject: evt.subject, deliveryCount: 1 });
            expect(e.headers['x-origin']).toBe('test');
            expect(Number.isNaN(Date.parse(e.publishedAt))).toBe(false);
          }
        }
        expect(new Set(seen['queue-api'].map((e) => e.id))).toEqual(
          new Set(seen['webhook-sender'].map((e) => e.id)),
        );
      });

      it('shares events between replicas of one group', async () => {
        const bus = await make();
        const other = await peerOf(bus);
        const evt = eventFor<{ n: number }>(['queue-api']);
        const byReplica: Record<string, string[]> = { a: [], b: [] };
        const handler = (name: string) => async (e: DeliveredEvent<{ n: number }>) => {
          byReplica[name].push(e.id);
          await sleep(20);
        };
        await bus.consume(evt, 'queue-api', handler('a'), { concurrency: 1 });
        await other.consume(evt, 'queue-api', handler('b'), { concurrency: 1 });
        for (let n = 0; n < 12; n++) await bus.publish(evt, { n });
        await waitFor('12 events', () => byReplica.a.length + byReplica.b.length >= 12);
        await sleep(200);
        const all = [...byReplica.a, ...byReplica.b];
        expect(all).toHaveLength(12);
        expect(new Set(all).size).toBe(12);
        expect(byReplica.a.length).toBeGreaterThan(0);
        expect(byReplica.b.length).toBeGreaterThan(0);
      });

      it('delivers an event published before the consumer started', async () => {
        const bus = await make();
        const evt = eventFor<{ early: boolean }>();
        await bus.publish(evt, { early: true }, { id: `early-${tag()}` });
        const got: DeliveredEvent<{ early: boolean }>[] = [];
        await bus.consume(evt, 'webhook-sender', async (e) => void got.push(e));
        await waitFor('the early event', () => got.length === 1);
        expect(got[0].payload).toEqual({ early: true });
        expect(got[0].id).toMatch(/^early-/);
      });

      it('redelivers after a failure with growing deliveryCount and the same id', async () => {
        const bus = await make();
        const evt = eventFor<{ x: number }>();
        const calls: Array<{ id: string; count: number }> = [];
        await bus.consume(
          evt,
          'queue-api',
          async (e) => {
            calls.push({ id: e.id, count: e.deliveryCount });
            if (e.deliveryCount < 3) throw new Error(`attempt ${e.deliveryCount} fails`);
          },
          { retryDelayMs: () => 50 },
        );
        await bus.publish(evt, { x: 1 });
        await waitFor('three deliveries', () => calls.length >= 3);
        await sleep(300);
        expect(calls.map((c) => c.count)).toEqual([1, 2, 3]);
        expect(new Set(calls.map((c) => c.id)).size).toBe(1);
      });

      it('dead-letters after maxDeliver failures and stops calling the handler', async () => {
        const logger = recordingLogger();
        const bus = await make({ logger });
        const evt = eventFor<{ x: number }>();
        let calls = 0;
        await bus.consume(
          evt,
          'queue-api',
          async () => {
            calls += 1;
            throw new Error('always fails');
          },
          { maxDeliver: 2, retryDelayMs: () => 30 },
        );
        await bus.publish(evt, { x: 1 });
        await waitFor('two deliveries', () => calls >= 2);
        await sleep(500);
        expect(calls).toBe(2);
        expect(logger.errors.join('\n')).toMatch(/dead-lettered/);
      });

      it('delivers an event published twice with the same id once', async () => {
        const bus = await make();
        const evt = eventFor<{ v: number }>(['queue-api']);
        const got: DeliveredEvent<{ v: number }>[] = [];
        await bus.consume(evt, 'queue-api', async (e) => void got.push(e));
        const id = `dup-${tag()}`;
        await bus.publish(evt, { v: 1 }, { id });
        await bus.publish(evt, { v: 1 }, { id });
        await waitFor('the event', () => got.length >= 1);
        await sleep(300);
        expect(got).toHaveLength(1);
        expect(got[0].id).toBe(id);
      });

      it('keeps unconsumed events across a bus restart', async () => {
        const first = await make();
        const evt = eventFor<{ n: number }>();
        await first.publish(evt, { n: 1 }, { id: `keep-1-${tag()}` });
        await first.publish(evt, { n: 2 }, { id: `keep-2-${tag()}` });
        await first.close();
        const second = await make({ restartOf: first });
        const got: DeliveredEvent<{ n: number }>[] = [];
        await second.consume(evt, 'queue-api', async (e) => void got.push(e));
        await waitFor('both events after the restart', () => got.length >= 2);
        expect(got.map((e) => e.payload.n).sort()).toEqual([1, 2]);
        expect(got.every((e) => e.id.startsWith('keep-'))).toBe(true);
      });

      it('rejects a consumer group the event does not declare', async () => {
        const bus = await make();
        const evt = eventFor<object>(['queue-api']);
        await expect(bus.consume(evt, 'pod-rest', async () => {})).rejects.toThrow(/not declared/);
      });

      it('carries a 5 MB event', async () => {
        const bus = await make();
        const big = bigText();
        const evt = eventFor<{ data: string }>();
        const got: Record<string, string> = {};
        for (const group of evt.consumers)
          await bus.consume(evt, group, async (e) => {
            got[group] = e.payload.data;
          });
        await bus.publish(evt, { data: big });
        await waitFor('the big event in both groups', () => Object.keys(got).length === 2, 15_000);
        expect(got['queue-api'] === big).toBe(true);
        expect(got['webhook-sender'] === big).toBe(true);
      });

      it('close() waits for an in-flight handler, which then counts as handled', async () => {
        const bus = await make();
        const evt = eventFor<object>(['queue-api']);
        let started = false;
        let finished = false;
        await bus.consume(evt, 'queue-api', async () => {
          started = true;
          await sleep(300);
          finished = true;
        });
        await bus.publish(evt, {});
        await waitFor('the handler to start', () => started);
        await bus.close();
        expect(finished).toBe(true);
        expect(bus.isReady()).toBe(false);
        await expect(bus.publish(evt, {})).rejects.toMatchObject({ status: 503 });

        const restarted = await make({ restartOf: bus });
        let again = 0;
        await restarted.consume(evt, 'queue-api', async () => void (again += 1));
        await sleep(300);
        expect(again).toBe(0);
      });
    });

    describe('consumer lag', () => {
      it('counts events a group has not acknowledged yet, back to 0 once handled', async () => {
        const bus = await make();
        const evt = eventFor<object>(['queue-api']);
        let release!: () => void;
        const gate = new Promise<void>((r) => {
          release = r;
        });
        let handled = 0;
        await bus.consume(
          evt,
          'queue-api',
          async () => {
            await gate;
            handled += 1;
          },
          { concurrency: 1 },
        );
        await Promise.all([bus.publish(evt, {}), bus.publish(evt, {}), bus.publish(evt, {})]);
        const pending = async () =>
          (await bus.consumerLag()).find(
            (l) => l.subject === evt.subject && l.group === 'queue-api',
          )?.pending;
        // The server's consumer state follows acknowledgements shortly after: poll.
        const until = async (what: string, n: number) => {
          const deadline = Date.now() + 5000;
          while ((await pending()) !== n) {
            if (Date.now() > deadline)
              throw new Error(`timed out waiting for ${what} (pending ${await pending()})`);
            await sleep(20);
          }
        };
        await until('3 events pending', 3);
        release();
        await waitFor('all handled', () => handled === 3);
        await until('no event pending', 0);
      });
    });

    describe('signals', () => {
      it('reach every subscriber', async () => {
        const bus = await make();
        const other = await peerOf(bus);
        const sig = defineSignal<{ key: string }>(`contract.${tag()}`);
        const got: string[] = [];
        await bus.onSignal(sig, (p) => void got.push(`a:${p.key}`));
        await other.onSignal(sig, (p) => void got.push(`b:${p.key}`));
        await bus.signal(sig, { key: 'k1' });
        await waitFor('both subscribers', () => got.length >= 2);
        await sleep(100);
        expect(got.sort()).toEqual(['a:k1', 'b:k1']);
      });
    });

    describe('trace context', () => {
      const spanNamed = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name);
      const expectChild = (child: ReadableSpan, parent: ReadableSpan) => {
        expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
        expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      };

      it('links the consumer span of an event to its producer span', async () => {
        const bus = await make();
        const evt = eventFor<object>(['queue-api']);
        let active: SpanContext | undefined;
        await bus.consume(evt, 'queue-api', async () => {
          active = trace.getActiveSpan()?.spanContext();
        });
        await bus.publish(evt, {});
        await waitFor('the consumer span', () => !!spanNamed(`${evt.subject} process`));
        const producer = spanNamed(`${evt.subject} publish`)!;
        const consumer = spanNamed(`${evt.subject} process`)!;
        expect(producer.kind).toBe(SpanKind.PRODUCER);
        expect(consumer.kind).toBe(SpanKind.CONSUMER);
        expectChild(consumer, producer);
        expect(active?.spanId).toBe(consumer.spanContext().spanId);
      });

      it('links the server span of a request to its client span', async () => {
        const server = await make();
        const client = await peerOf(server);
        const rpc = defineRpc<object, string | undefined>('scheduler', `${tag()}.traced`);
        await server.serve(rpc, async () => trace.getActiveSpan()?.spanContext().traceId);
        const traceIdSeen = await client.request(rpc, {});
        await waitFor('the client span', () => !!spanNamed(`${rpc.subject} request`));
        const clientSpan = spanNamed(`${rpc.subject} request`)!;
        const serverSpan = spanNamed(`${rpc.subject} handle`)!;
        expect(clientSpan.kind).toBe(SpanKind.CLIENT);
        expect(serverSpan.kind).toBe(SpanKind.SERVER);
        expectChild(serverSpan, clientSpan);
        expect(traceIdSeen).toBe(clientSpan.spanContext().traceId);
      });
    });
  });
}
