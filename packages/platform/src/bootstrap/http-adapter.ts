import { randomUUID } from 'node:crypto';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JOB_LIMITS, RunplaneError } from '@runplane/contracts';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parseJsonBody } from '../http/json-body.js';
import { installBodyBudget } from '../http/body-budget.js';

/** The biggest body any route takes (runsync's 20 MB plus headroom); routes enforce their own. */
export const MAX_BODY_BYTES = JOB_LIMITS.payloadBytes.runsync + 1024 * 1024;

/** How a connection's time is bounded while a request is being received (docs/configuration.md). */
export interface HttpTimeouts {
  headersMs: number;
  /** Headers and body; the answer is not bounded (long polls take minutes). */
  requestMs: number;
  keepAliveMs: number;
}

export interface HttpAdapterOptions {
  timeouts?: HttpTimeouts;
  /** Proxies whose X-Forwarded-For names the client (request.ip). */
  trustProxy?: string;
}

export function createHttpAdapter(options: HttpAdapterOptions = {}): FastifyAdapter {
  const t = options.timeouts;
  // Node needs headersTimeout <= requestTimeout, and checks both only every
  // connectionsCheckingInterval (30 s by default): check a few times per timeout instead.
  const headersMs = t && Math.min(t.headersMs, t.requestMs);
  const http = t && {
    headersTimeout: headersMs,
    requestTimeout: t.requestMs,
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersMs! / 4))),
  };
  return new FastifyAdapter({
    ...(t && { requestTimeout: t.requestMs, keepAliveTimeout: t.keepAliveMs, http }),
    // No connectionTimeout (socket inactivity): a long poll is legitimately silent for minutes.
    trustProxy: options.trustProxy || false,
    bodyLimit: MAX_BODY_BYTES,
    logger: false,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && given.length <= 128 ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    forceCloseConnections: 'idle',
  });
}

/** Fastify-level behaviour shared by every service: lenient JSON bodies and request logs. */
export function configureFastify(
  fastify: FastifyInstance,
  logger: Logger,
  logRequests: boolean,
  maxInFlightBodyBytes = 0,
): void {
  // RunPod's worker SDK posts raw JSON as x-www-form-urlencoded and some clients send no
  // content-type at all: every body is parsed as JSON when it is JSON. An empty body is "no body".
  const parseJson = (
    _req: unknown,
    body: string,
    done: (err: Error | null, value?: unknown) => void,
  ) => {
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err as Error);
    }
  };
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, parseJson);

  installBodyBudget(fastify, maxInFlightBodyBytes);

  // A NUL character can be neither an id nor a stored value (PostgreSQL text refuses it).
  fastify.addHook('onRequest', async (request) => {
    if (/%00/i.test(request.url))
      throw RunplaneError.badRequest('the URL must not contain NUL (%00) characters');
  });

  // Unknown routes and errors raised before a handler runs (body parsing, limits) go through
  // Nest's handlers to the global HttpErrorFilter, which renders the contract's error body.

  if (logRequests) {
    fastify.addHook('onResponse', async (request, reply) => {
      logger.info(
        {
          reqId: request.id,
          method: request.method,
          url: request.routeOptions?.url ?? request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    });
  }
}
