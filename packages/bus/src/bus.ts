import type { EventDefinition, RpcDefinition, SignalDefinition } from '@runplane/contracts';

export type Headers = Record<string, string>;

/** One delivery of a durable event to a consumer group. */
export interface DeliveredEvent<T> {
  /** Stable across redeliveries and duplicates: consumers de-duplicate on it. */
  id: string;
  subject: string;
  payload: T;
  publishedAt: string;
  /** 1 on the first delivery, then 2, 3, ... */
  deliveryCount: number;
  headers: Headers;
}

/** Resolving acknowledges the event; throwing makes the bus redeliver it later. */
export type EventHandler<T> = (event: DeliveredEvent<T>) => Promise<void>;
export type RpcHandler<Req, Res> = (
  payload: Req,
  context: { subject: string; headers: Headers },
) => Promise<Res>;
export type SignalHandler<T> = (payload: T) => void | Promise<void>;

export interface PublishOptions {
  /**
   * Event id, used for de-duplication by the bus (e.g. the outbox row id). Random if omitted. A
   * publish is dropped when the same id was published less than 2 minutes before (JetStream's
   * duplicate window; the in-process journals also drop it while the first is still held).
   */
  id?: string;
  headers?: Headers;
}

export interface ConsumeOptions {
  /** Deliveries handled at once by this subscription (default 8). */
  concurrency?: number;
  /** Give up after this many deliveries and dead-letter the event (default 20). */
  maxDeliver?: number;
  /** Delay before redelivering a failed event, by attempt number (default: 1 s, 2 s, 4 s ... 60 s). */
  retryDelayMs?: (deliveryCount: number) => number;
}

export interface RequestOptions {
  /** How long to wait for the reply (default 10 s). Long polls pass their wait plus a margin. */
  timeoutMs?: number;
  headers?: Headers;
}

/** Events of one consumer group not yet acknowledged (metrics: consumer lag). */
export interface ConsumerLag {
  /** The event's subject, e.g. `runplane.evt.job.finished.v1`. */
  subject: string;
  group: string;
  /** Published and not yet acknowledged by the group: waiting, in flight or waiting for a retry. */
  pending: number;
}

export interface Subscription {
  /** Stops taking new messages and waits for the ones in hand. */
  stop(): Promise<void>;
}

/**
 * The message bus every service talks through. Two implementations pass one contract suite:
 * `NatsBus` (JetStream, cluster mode) and `InProcessBus` (standalone mode and unit tests).
 *
 * - Events are durable and at-least-once: each consumer group of the event definition gets every
 *   event; replicas in one group share them; a failed handler means redelivery.
 * - Requests go to exactly one replica of the serving service; errors thrown as RunplaneError
 *   reach the caller intact.
 * - Signals are best-effort fan-out to every instance.
 * - W3C trace context travels in message headers.
 */
export abstract class Bus {
  abstract readonly kind: 'nats' | 'in-process';
  abstract publish<T>(
    event: EventDefinition<T>,
    payload: T,
    options?: PublishOptions,
  ): Promise<void>;
  abstract consume<T>(
    event: EventDefinition<T>,
    group: string,
    handler: EventHandler<T>,
    options?: ConsumeOptions,
  ): Promise<Subscription>;
  abstract request<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    payload: Req,
    options?: RequestOptions,
  ): Promise<Res>;
  abstract serve<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    handler: RpcHandler<Req, Res>,
  ): Promise<Subscription>;
  abstract signal<T>(signal: SignalDefinition<T>, payload: T): Promise<void>;
  abstract onSignal<T>(
    signal: SignalDefinition<T>,
    handler: SignalHandler<T>,
  ): Promise<Subscription>;
  /** True while the bus can carry messages (used by /readyz). */
  abstract isReady(): boolean;
  /** Graceful close: stop subscriptions, finish in-flight handlers, flush pending publishes. */
  abstract close(): Promise<void>;
  /** Unacknowledged events per consumer group this bus knows of (empty where it cannot tell). */
  async consumerLag(): Promise<ConsumerLag[]> {
    return [];
  }
}

export const DEFAULT_CONSUME: Required<ConsumeOptions> = {
  concurrency: 8,
  maxDeliver: 20,
  retryDelayMs: (n) => Math.min(60_000, 1000 * 2 ** Math.max(0, n - 1)),
};
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
