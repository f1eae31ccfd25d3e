import type { ServiceName } from '../services.js';

/** Root of every Runplane subject; lets several installations share one NATS account. */
export const SUBJECT_ROOT = 'runplane';

/**
 * A request/reply operation served by one service (its replicas share the work).
 * `Req`/`Res` are phantom types that make `bus.request(def, payload)` fully typed.
 */
export interface RpcDefinition<Req, Res> {
  readonly kind: 'rpc';
  readonly subject: string;
  /** The service whose replicas answer. */
  readonly service: ServiceName;
  /** class-validator DTO checked by the handler's validation pipe. */
  readonly requestType?: new () => Req;
  readonly __types?: { req: Req; res: Res };
}

/**
 * A durable event (at-least-once). `consumers` is the topology: every listed consumer group gets
 * every event, replicas of one group share them. Both bus implementations provision the groups
 * from this list, so an event published before a consumer starts is still delivered to it.
 */
export interface EventDefinition<T> {
  readonly kind: 'event';
  readonly subject: string;
  readonly name: string;
  readonly version: number;
  readonly producer: ServiceName;
  readonly consumers: readonly string[];
  readonly payloadType?: new () => T;
  readonly __type?: T;
}

/**
 * A best-effort signal to every running instance (no durability, no ack): cache invalidation,
 * wake-ups of long polls. Losing one must only delay, never break, whatever listens.
 */
export interface SignalDefinition<T> {
  readonly kind: 'signal';
  readonly subject: string;
  readonly __type?: T;
}

export function defineRpc<Req, Res>(
  service: ServiceName,
  operation: string,
  requestType?: new () => Req,
): RpcDefinition<Req, Res> {
  return {
    kind: 'rpc',
    subject: `${SUBJECT_ROOT}.rpc.${service}.${operation}`,
    service,
    requestType,
  };
}

export function defineEvent<T>(spec: {
  name: string;
  version: number;
  producer: ServiceName;
  consumers: readonly string[];
  payloadType?: new () => T;
}): EventDefinition<T> {
  return { kind: 'event', subject: `${SUBJECT_ROOT}.evt.${spec.name}.v${spec.version}`, ...spec };
}

export function defineSignal<T>(name: string): SignalDefinition<T> {
  return { kind: 'signal', subject: `${SUBJECT_ROOT}.sig.${name}` };
}

export type RpcRequest<D> = D extends RpcDefinition<infer Req, unknown> ? Req : never;
export type RpcResponse<D> = D extends RpcDefinition<unknown, infer Res> ? Res : never;
