import { createHash } from 'node:crypto';
import { RunplaneError } from '@runplane/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Paths of the management APIs (REST and GraphQL); the queue API has its own per-endpoint limits. */
export const MANAGEMENT_PATHS = /^\/(v1\/|graphql)/;
const WINDOW_SECONDS = 10;

/**
 * A rate limit on the management APIs (`/v1/...`, `/graphql`), which the spec leaves open: each
 * presented key (or, without one, each client address) may make `perWindow` requests per 10 s on
 * this instance. These are low-volume control calls, so a per-instance memory count is enough
 * (docs/limits.md). Checked as the request arrives, before any body is parsed or key verified.
 */
export function installManagementRateLimit(fastify: FastifyInstance, perWindow: number): void {
  if (perWindow <= 0) return;
  const limiter = new RateLimiterMemory({
    points: perWindow,
    duration: WINDOW_SECONDS,
    keyPrefix: 'mgmt',
  });
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!MANAGEMENT_PATHS.test(request.url)) return;
    try {
      await limiter.consume(callerOf(request));
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      reply.header('retry-after', String(retryAfter));
      throw new RunplaneError(
        429,
        `rate limit of the management API exceeded (${perWindow} requests per ${WINDOW_SECONDS} s per key); retry after ${retryAfter} s`,
        undefined,
        'RATE_LIMITED',
      );
    }
  });
}

/** Who is calling, without verifying anything: a hash of the presented key, else the address. */
function callerOf(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const query = /[?&]api_key=([^&]*)/.exec(request.url)?.[1];
  const presented = (Array.isArray(header) ? header[0] : header) ?? query;
  return presented
    ? createHash('sha256')
        .update(presented.replace(/^bearer\s+/i, ''))
        .digest('base64url')
    : `ip:${request.ip}`;
}
