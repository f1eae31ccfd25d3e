import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import type { Headers } from './bus.js';

const tracer = trace.getTracer('@runplane/bus');

/** Adds W3C trace context (traceparent/tracestate) of the active span to outgoing headers. */
export function injectTraceContext(headers: Headers = {}): Headers {
  propagation.inject(context.active(), headers);
  return headers;
}

/** Runs `fn` in a producer/client span so the trace context injected into headers names it as parent. */
export function withSendSpan<T>(
  name: string,
  kind: 'producer' | 'client',
  subject: string,
  fn: (headers: Headers) => Promise<T>,
  headers: Headers = {},
): Promise<T> {
  return tracer.startActiveSpan(
    name,
    {
      kind: kind === 'producer' ? SpanKind.PRODUCER : SpanKind.CLIENT,
      attributes: { 'messaging.destination.name': subject, 'messaging.system': 'runplane-bus' },
    },
    (span) => finish(span, () => fn(injectTraceContext({ ...headers }))),
  );
}

/** Runs a handler inside a consumer/server span whose parent is the trace context found in headers. */
export function withReceiveSpan<T>(
  name: string,
  kind: 'consumer' | 'server',
  subject: string,
  headers: Headers,
  fn: () => Promise<T>,
): Promise<T> {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return tracer.startActiveSpan(
    name,
    {
      kind: kind === 'consumer' ? SpanKind.CONSUMER : SpanKind.SERVER,
      attributes: { 'messaging.destination.name': subject, 'messaging.system': 'runplane-bus' },
    },
    parent,
    (span) => finish(span, fn),
  );
}

async function finish<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
    throw err;
  } finally {
    span.end();
  }
}
