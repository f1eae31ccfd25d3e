import { randomUUID } from 'node:crypto';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { JOB_LIMITS, RunplaneError } from '@runplane/contracts';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parseJsonBody } from '../http/json-body.js';
import { installManagementRateLimit } from '../http/management-rate-limit.js';

/** The biggest body any route takes (runsync's 20 MB plus headroom); routes enforce their own. */
export const MAX_BODY_BYTES = JOB_LIMITS.payloadBytes.runsync + 1024 * 1024;

export function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({
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
  managementRatePerWindow = 0,
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

  installManagementRateLimit(fastify, managementRatePerWindow);

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
