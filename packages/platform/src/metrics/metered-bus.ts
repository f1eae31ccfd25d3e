import type { EventDefinition, RpcDefinition, SignalDefinition } from '@runplane/contracts';
import {
  Bus,
  type ConsumeOptions,
  type ConsumerLag,
  type EventHandler,
  type PublishOptions,
  type RequestOptions,
  type RpcHandler,
  type SignalHandler,
  type Subscription,
} from '@runplane/bus';
import type { RunplaneMetrics } from './runplane-metrics.js';

const seconds = (start: number) => (performance.now() - start) / 1000;

/**
 * The process's bus with metrics: calls, handlers and publishes are counted and timed in memory
 * (no I/O on the message path); consumer lag is asked of the bus when Prometheus scrapes.
 */
export class MeteredBus extends Bus {
  readonly kind: 'nats' | 'in-process';

  constructor(
    private readonly inner: Bus,
    private readonly metrics: RunplaneMetrics,
  ) {
    super();
    this.kind = inner.kind;
    metrics.beforeScrape('bus consumer lag', async () => {
      const lag = await inner.consumerLag();
      metrics.busConsumerPending.reset();
      for (const l of lag)
        metrics.busConsumerPending.set({ subject: l.subject, group: l.group }, l.pending);
    });
  }

  /** The bus underneath (NatsBus or InProcessBus), for diagnostics and tests. */
  get unwrapped(): Bus {
    return this.inner;
  }

  async publish<T>(event: EventDefinition<T>, payload: T, options?: PublishOptions): Promise<void> {
    await this.inner.publish(event, payload, options);
    this.metrics.busPublished.inc({ subject: event.subject });
  }

  consume<T>(
    event: EventDefinition<T>,
    group: string,
    handler: EventHandler<T>,
    options?: ConsumeOptions,
  ): Promise<Subscription> {
    const h = this.metrics.busHandlerDuration;
    return this.inner.consume(
      event,
      group,
      async (delivered) => {
        const start = performance.now();
        try {
          await handler(delivered);
          h.observe({ subject: event.subject, kind: 'event', outcome: 'ok' }, seconds(start));
        } catch (err) {
          h.observe({ subject: event.subject, kind: 'event', outcome: 'error' }, seconds(start));
          throw err;
        }
      },
      options,
    );
  }

  async request<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    payload: Req,
    options?: RequestOptions,
  ): Promise<Res> {
    const start = performance.now();
    try {
      const reply = await this.inner.request(rpc, payload, options);
      this.metrics.busRequestDuration.observe(
        { subject: rpc.subject, outcome: 'ok' },
        seconds(start),
      );
      return reply;
    } catch (err) {
      this.metrics.busRequestDuration.observe(
        { subject: rpc.subject, outcome: 'error' },
        seconds(start),
      );
      throw err;
    }
  }

  serve<Req, Res>(
    rpc: RpcDefinition<Req, Res>,
    handler: RpcHandler<Req, Res>,
  ): Promise<Subscription> {
    const h = this.metrics.busHandlerDuration;
    return this.inner.serve(rpc, async (payload, context) => {
      const start = performance.now();
      try {
        const reply = await handler(payload, context);
        h.observe({ subject: rpc.subject, kind: 'rpc', outcome: 'ok' }, seconds(start));
        return reply;
      } catch (err) {
        h.observe({ subject: rpc.subject, kind: 'rpc', outcome: 'error' }, seconds(start));
        throw err;
      }
    });
  }

  signal<T>(signal: SignalDefinition<T>, payload: T): Promise<void> {
    return this.inner.signal(signal, payload);
  }

  onSignal<T>(signal: SignalDefinition<T>, handler: SignalHandler<T>): Promise<Subscription> {
    return this.inner.onSignal(signal, handler);
  }

  isReady(): boolean {
    return this.inner.isReady();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  override consumerLag(): Promise<ConsumerLag[]> {
    return this.inner.consumerLag();
  }
}
