import { randomUUID } from 'node:crypto';
import {
  RunplaneError,
  type EventDefinition,
  type RpcDefinition,
  type SignalDefinition,
} from '@runplane/contracts';
import {
  Bus,
  DEFAULT_CONSUME,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type ConsumeOptions,
  type EventHandler,
  type Headers,
  type ConsumerLag,
  type PublishOptions,
  type RequestOptions,
  type RpcHandler,
  type SignalHandler,
  type Subscription,
} from '../bus.js';
import { silentLogger, type BusLogger } from '../logger.js';
import { withReceiveSpan, withSendSpan } from '../tracing.js';
import { replyFromError, unwrapReply, viaJson, type RpcReply } from '../wire.js';
import { MemoryJournal, type EventJournal, type PendingDelivery } from './journal.js';

interface Consumer {
  handler: EventHandler<unknown>;
  options: Required<ConsumeOptions>;
  active: number;
  stopped: boolean;
}

/** Deliveries of one subject to one consumer group, shared by that group's subscriptions. */
class GroupQueue {
  readonly waiting: PendingDelivery[] = [];
  /** Ids queued, in flight or waiting for a retry: a delivery is never held twice. */
  readonly held = new Set<string>();
  readonly consumers: Consumer[] = [];
  next = 0;
  constructor(
    readonly subject: string,
    readonly group: string,
  ) {}
}

export interface InProcessBusOptions {
  /** Where events wait for their consumers; MemoryJournal unless given. */
  journal?: EventJournal;
  logger?: BusLogger;
}

/**
 * The bus of the standalone server and of unit tests: everything in one process, with events kept
 * in a journal (durable when the journal is) and payloads copied through JSON exactly as a network
 * bus would carry them.
 */
export class InProcessBus extends Bus {
  readonly kind = 'in-process' as const;
  private readonly journal: EventJournal;
  private readonly logger: BusLogger;
  private readonly groups = new Map<string, GroupQueue>();
  private readonly rpcHandlers = new Map<string, Array<RpcHandler<unknown, unknown>>>();
  private readonly rpcNext = new Map<string, number>();
  private readonly signalHandlers = new Map<string, Set<SignalHandler<unknown>>>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(options: InProcessBusOptions = {}) {
    super();
    this.journal = options.journal ?? new MemoryJournal();
    this.logger = options.logger ?? silentLogger;
  }

  isReady(): boolean {
    return !this.closed;
  }

  /** Deliveries each group holds (queued, in flight or waiting for a retry) in this process. */
  override async consumerLag(): Promise<ConsumerLag[]> {
    return [...this.groups.values()].map((q) => ({
      subject: q.subject,
      group: q.group,
      pending: q.held.size,
    }));
  }

  // ---- events ---------------------------------------------------------------------------------

  async publish<T>(
    event: EventDefinition<T>,
    payload: T,
    options: PublishOptions = {},
  ): Promise<void> {
    this.assertOpen();
    await withSendSpan(
      `${event.subject} publish`,
      'producer',
      event.subject,
      async (headers) => {
        const stored = {
          id: options.id ?? randomUUID(),
          subject: event.subject,
          payload: viaJson(payload),
          headers,
          publishedAt: new Date().toISOString(),
        };
        const isNew = await this.journal.append(stored, event.consumers);
        if (!isNew) return; // duplicate id: already delivered or on its way
        for (const group of event.consumers) {
          const queue = this.groups.get(key(event.subject, group));
          if (queue) this.enqueue(queue, { event: stored, attempts: 0 });
        }
      },
      options.headers,
    );
  }

  async consume<T>(
    event: EventDefinition<T>,
    group: string,
    handler: EventHandler<T>,
    options: ConsumeOptions = {},
  ): Promise<Subscription> {
    this.assertOpen();
    if (!event.consumers.includes(group)) {
      throw new Error(
        `consumer group "${group}" is not declared for ${event.subject} (declared: ${event.consumers.join(', ')})`,
      );
    }
    const consumer: Consumer = {
      handler: handler as EventHandler<unknown>,
      options: { ...DEFAULT_CONSUME, ...options },
      active: 0,
      stopped: false,
    };
    const k = key(event.subject, group);
    let queue = this.groups.get(k);
    if (!queue) {
      queue = new GroupQueue(event.subject, group);
      this.groups.set(k, queue);
      queue.consumers.push(consumer);
      for (const pending of await this.journal.pending(event.subject, group))
        this.enqueue(queue, pending);
    } else {
      queue.consumers.push(consumer);
      this.pump(queue);
    }
    return {
      stop: async () => {
        consumer.stopped = true;
        queue!.consumers.splice(queue!.consumers.indexOf(consumer), 1);
        while (consumer.active > 0) await new Promise((r) => setTimeout(r, 5));
      },
    };
  }

  private enqueue(queue: GroupQueue, delivery: PendingDelivery): void {
    if (queue.held.has(delivery.event.id)) return;
    queue.held.add(delivery.event.id);
    queue.waiting.push(delivery);
    this.pump(queue);
  }

  /** Hands waiting deliveries to consumers with free capacity, round robin. */
  private pump(queue: GroupQueue): void {
    while (queue.waiting.length > 0 && !this.closed) {
      const consumer = this.pickConsumer(queue);
      if (!consumer) return;
      const delivery = queue.waiting.shift()!;
      consumer.active += 1;
      const run = this.deliver(queue, consumer, delivery).finally(() => {
        consumer.active -= 1;
        this.inflight.delete(run);
        this.pump(queue);
      });
      this.inflight.add(run);
    }
  }

  private pickConsumer(queue: GroupQueue): Consumer | undefined {
    const n = queue.consumers.length;
    for (let i = 0; i < n; i++) {
      const c = queue.consumers[(queue.next + i) % n];
      if (!c.stopped && c.active < c.options.concurrency) {
        queue.next = (queue.next + i + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  private async deliver(
    queue: GroupQueue,
    consumer: Consumer,
    delivery: PendingDelivery,
  ): Promise<void> {
    const { event } = delivery;
    const deliveryCount = delivery.attempts + 1;
    try {
      await withReceiveSpan(
        `${event.subject} process`,
        'consumer',
        event.subject,
        event.headers,
        () =>
          consumer.handler({
            id: event.id,
            subject: event.subject,
            payload: viaJson(event.payload),
            publishedAt: event.publishedAt,
            deliveryCount,
            headers: { ...event.headers },
          }),
      );
      queue.held.delete(event.id);
      await this.journal.settle(event.id, queue.group, 'acked');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (deliveryCount >= consumer.options.maxDeliver) {
        queue.held.delete(event.id);
        this.logger.error(
          {
            subject: event.subject,
            group: queue.group,
            eventId: event.id,
            deliveryCount,
            err: message,
          },
          'event dead-lettered after too many failed deliveries',
        );
        await this.journal.settle(event.id, queue.group, 'dead', message);
        return;
      }
      await this.journal.recordAttempt(event.id, queue.group, message);
      this.logger.warn(
        {
          subject: event.subject,
          group: queue.group,
          eventId: event.id,
          deliveryCount,
          err: message,
        },
        'event handler failed; will redeliver',
      );
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.closed) return;
        queue.waiting.push({ event, attempts: deliveryCount });
        this.pump(queue);
      }, consumer.options.retryDelayMs(deliveryCount));
      this.timers.add(timer);
    }
  }

  // ---- request/reply --------------------------------------------------------------------------

  async request<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    payload: Req,
    options: RequestOptions = {},
  ): Promise<Res> {
    this.assertOpen();
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return withSendSpan(
      `${rpc.subject} request`,
      'client',
      rpc.subject,
      async (headers) => {
        const handler = this.pickRpcHandler(rpc.subject);
        if (!handler)
          throw RunplaneError.unavailable(
            `no instance of ${rpc.service} is answering ${rpc.subject}`,
          );
        const reply = await withTimeout(
          this.answer(rpc.subject, handler, viaJson(payload), headers),
          timeoutMs,
          rpc.subject,
        );
        return unwrapReply(viaJson(reply)) as Res;
      },
      options.headers,
    );
  }

  private async answer(
    subject: string,
    handler: RpcHandler<unknown, unknown>,
    payload: unknown,
    headers: Headers,
  ): Promise<RpcReply<unknown>> {
    const run = withReceiveSpan(
      `${subject} handle`,
      'server',
      subject,
      headers,
      async (): Promise<RpcReply<unknown>> => {
        try {
          return { ok: true, data: await handler(payload, { subject, headers }) };
        } catch (err) {
          if (!(err instanceof RunplaneError))
            this.logger.error(
              { subject, err: (err as Error)?.stack ?? String(err) },
              'request handler failed',
            );
          return replyFromError(err, subject);
        }
      },
    );
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  private pickRpcHandler(subject: string): RpcHandler<unknown, unknown> | undefined {
    const list = this.rpcHandlers.get(subject);
    if (!list?.length) return undefined;
    const i = (this.rpcNext.get(subject) ?? 0) % list.length;
    this.rpcNext.set(subject, i + 1);
    return list[i];
  }

  async serve<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    handler: RpcHandler<Req, Res>,
  ): Promise<Subscription> {
    this.assertOpen();
    const list = this.rpcHandlers.get(rpc.subject) ?? [];
    list.push(handler as RpcHandler<unknown, unknown>);
    this.rpcHandlers.set(rpc.subject, list);
    return {
      stop: async () => {
        const i = list.indexOf(handler as RpcHandler<unknown, unknown>);
        if (i >= 0) list.splice(i, 1);
      },
    };
  }

  // ---- signals --------------------------------------------------------------------------------

  async signal<T>(signal: SignalDefinition<T>, payload: T): Promise<void> {
    this.assertOpen();
    for (const handler of this.signalHandlers.get(signal.subject) ?? []) {
      const copy = viaJson(payload);
      queueMicrotask(() => {
        Promise.resolve()
          .then(() => handler(copy))
          .catch((err) =>
            this.logger.warn(
              { subject: signal.subject, err: String(err) },
              'signal handler failed',
            ),
          );
      });
    }
  }

  async onSignal<T>(signal: SignalDefinition<T>, handler: SignalHandler<T>): Promise<Subscription> {
    const set = this.signalHandlers.get(signal.subject) ?? new Set();
    set.add(handler as SignalHandler<unknown>);
    this.signalHandlers.set(signal.subject, set);
    return { stop: async () => void set.delete(handler as SignalHandler<unknown>) };
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.inflight]);
    this.rpcHandlers.clear();
    this.signalHandlers.clear();
    await this.journal.close();
  }

  private assertOpen(): void {
    if (this.closed) throw RunplaneError.unavailable('the bus is closed');
  }
}

const key = (subject: string, group: string) => `${group}\u0000${subject}`;

function withTimeout<T>(promise: Promise<T>, ms: number, subject: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new RunplaneError(504, `no reply to ${subject} within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
