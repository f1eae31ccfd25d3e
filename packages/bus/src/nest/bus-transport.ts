import { Catch, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import {
  BaseRpcContext,
  Server,
  type CustomTransportStrategy,
  type MessageHandler,
} from '@nestjs/microservices';
import { lastValueFrom, throwError, type Observable } from 'rxjs';
import type { Bus, Headers, Subscription } from '../bus.js';
import { BUS_BINDING, type BusBinding } from './decorators.js';

/** Context handed to bus handlers (`@Ctx() ctx: BusContext`). */
export class BusContext extends BaseRpcContext<[string, Headers]> {
  getSubject(): string {
    return this.args[0];
  }
  getHeaders(): Headers {
    return this.args[1];
  }
}

/**
 * Nest microservice transport over our Bus: every `@OnRpc` / `@OnEvent` / `@OnSignal` method of the
 * application's controllers is subscribed when the app starts, whichever Bus implementation runs.
 * Pipes, guards and interceptors apply as for any Nest microservice handler.
 */
export class BusTransport extends Server implements CustomTransportStrategy {
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly bus: Bus) {
    super();
  }

  async listen(callback: (err?: unknown) => void): Promise<void> {
    try {
      for (const [pattern, handler] of this.messageHandlers) {
        const binding = handler.extras?.[BUS_BINDING] as BusBinding | undefined;
        if (!binding)
          throw new Error(
            `handler for "${pattern}" was not declared with @OnRpc, @OnEvent or @OnSignal`,
          );
        this.subscriptions.push(await this.subscribe(binding, handler));
      }
      callback();
    } catch (err) {
      callback(err);
    }
  }

  private subscribe(binding: BusBinding, handler: MessageHandler): Promise<Subscription> {
    const invoke = async (payload: unknown, subject: string, headers: Headers) =>
      lastValueFrom(
        this.transformToObservable(await handler(payload, new BusContext([subject, headers]))),
        { defaultValue: undefined },
      );
    switch (binding.kind) {
      case 'rpc':
        return this.bus.serve(binding.def, (payload, ctx) =>
          invoke(payload, ctx.subject, ctx.headers),
        );
      case 'event':
        return this.bus.consume(
          binding.def,
          binding.group,
          async (event) => {
            await invoke(event.payload, event.subject, {
              ...event.headers,
              'runplane-event-id': event.id,
              'runplane-delivery-count': String(event.deliveryCount),
            });
          },
          binding.options,
        );
      case 'signal':
        return this.bus.onSignal(binding.def, async (payload) => {
          await invoke(payload, binding.def.subject, {});
        });
    }
  }

  /** Stops taking messages; the Bus itself is closed by whoever created it, after the app. */
  async close(): Promise<void> {
    await Promise.allSettled(this.subscriptions.splice(0).map((s) => s.stop()));
  }

  on(): void {
    // No transport-level events to listen to.
  }

  unwrap<T>(): T {
    return this.bus as T;
  }
}

/**
 * Lets errors thrown by bus handlers reach the Bus untouched (Nest's default RPC filter would turn
 * them into a generic "Internal server error"); the Bus turns RunplaneError into the caller's error.
 */
@Catch()
export class BusErrorPassthroughFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
