import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import {
  context,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { finalize, tap, type Observable } from 'rxjs';

const tracer = trace.getTracer('@runplane/platform');

// The provider the API hands out before an SDK registers one: a no-op.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** True when a tracer provider is registered (the SDK started); false means spans would be no-ops. */
export function tracingActive(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

interface FastifyLikeRequest {
  method?: string;
  url?: string;
  routeOptions?: { url?: string };
}

interface BusLikeContext {
  getSubject?(): string;
}

/**
 * One span per Nest handler invocation, child of whatever span is active:
 * - HTTP: `<Controller>.<method>` under the incoming request's server span (instrumentation-http),
 *   with `http.route`; the server span is renamed `<METHOD> <route>` and given `http.route` too
 *   (instrumentation-http cannot know Fastify's route template).
 * - Bus: `<Controller>.<method>` under the consumer/server span the bus opens for the message,
 *   with `messaging.destination.name`.
 * Work done by the handler (bus requests, Prisma queries) nests under it. A thrown error is
 * recorded on the span; 4xx errors (the caller's fault) do not mark the span as failed.
 *
 * Registered globally on the HTTP app and on the bus microservice (see tracingInterceptors()).
 * Without a tracer provider it only checks that and hands over to the handler.
 */
@Injectable()
export class TracingInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!tracingActive()) return next.handle();

    const name = `${ctx.getClass()?.name ?? 'Anonymous'}.${ctx.getHandler()?.name || 'handler'}`;
    const attributes: Attributes = { 'code.function.name': name };
    const parent = context.active();
    const type = ctx.getType<string>();

    if (type === 'http') {
      const request = ctx.switchToHttp().getRequest<FastifyLikeRequest>();
      const route = request?.routeOptions?.url;
      const method = request?.method;
      if (method) attributes['http.request.method'] = method;
      if (route) {
        attributes['http.route'] = route;
        const server = trace.getSpan(parent);
        if (server?.isRecording()) {
          server.setAttribute('http.route', route);
          if (method) server.updateName(`${method} ${route}`);
        }
      }
    } else if (type === 'rpc') {
      const busContext = ctx.switchToRpc().getContext<BusLikeContext>();
      const subject =
        typeof busContext?.getSubject === 'function' ? busContext.getSubject() : undefined;
      if (subject) {
        attributes['messaging.destination.name'] = subject;
        attributes['messaging.system'] = 'runplane-bus';
      }
    }

    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
    const active = trace.setSpan(parent, span);
    let handled: Observable<unknown>;
    try {
      // Nest binds the rest of the pipeline (and the handler) to the async context current when
      // handle() is called, so everything the handler does runs with this span active.
      handled = context.with(active, () => next.handle());
    } catch (err) {
      recordError(span, err);
      span.end();
      throw err;
    }
    return handled.pipe(
      tap({ error: (err: unknown) => recordError(span, err) }),
      finalize(() => span.end()),
    );
  }
}

/**
 * The interceptors to register globally (HTTP app and bus microservice): the TracingInterceptor when
 * a tracer provider is registered at start (the CLI's otel-register ran with an endpoint), none
 * otherwise, so that with tracing off Nest keeps its interceptor-free fast path.
 */
export function tracingInterceptors(): NestInterceptor[] {
  return tracingActive() ? [new TracingInterceptor()] : [];
}

function recordError(span: Span, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  const status = statusOf(err);
  if (status !== undefined) span.setAttribute('runplane.error.status', status);
  if (status === undefined || status >= 500)
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/** The HTTP-like status an error carries (RunplaneError.status, Nest's HttpException.getStatus()). */
function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; getStatus?: () => unknown };
  if (typeof e.status === 'number') return e.status;
  if (typeof e.getStatus === 'function') {
    const s = e.getStatus();
    if (typeof s === 'number') return s;
  }
  return undefined;
}
