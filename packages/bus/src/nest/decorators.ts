import { EventPattern, MessagePattern } from '@nestjs/microservices';
import type { EventDefinition, RpcDefinition, SignalDefinition } from '@runplane/contracts';
import type { ConsumeOptions } from '../bus.js';

/** What a bus controller method serves, kept in the pattern's extras for BusTransport. */
export type BusBinding =
  | { kind: 'rpc'; def: RpcDefinition<unknown, unknown> }
  | { kind: 'event'; def: EventDefinition<unknown>; group: string; options?: ConsumeOptions }
  | { kind: 'signal'; def: SignalDefinition<unknown> };

export const BUS_BINDING = 'runplaneBus';

/** Answers a request/reply operation: `@OnRpc(SchedulerRpc.submitJob) submit(@Payload() req: SubmitJobRequest)`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any subject's payload and reply types
export const OnRpc = (rpc: RpcDefinition<any, any>): MethodDecorator =>
  MessagePattern(rpc.subject, { [BUS_BINDING]: { kind: 'rpc', def: rpc } satisfies BusBinding });

/** Consumes a durable event as consumer group `group` (must be declared in the event's `consumers`). */
export const OnEvent = (
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any event's payload type
  event: EventDefinition<any>,
  group: string,
  options?: ConsumeOptions,
): MethodDecorator => <MethodDecorator>EventPattern(event.subject, {
    [BUS_BINDING]: { kind: 'event', def: event, group, options } satisfies BusBinding,
  });

/** Receives a best-effort signal on every instance. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any signal's payload type
export const OnSignal = (signal: SignalDefinition<any>): MethodDecorator =>
  <MethodDecorator>EventPattern(signal.subject, {
    [BUS_BINDING]: { kind: 'signal', def: signal } satisfies BusBinding,
  });
