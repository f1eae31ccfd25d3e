import type { FastifyInstance } from 'fastify';
import type { RunplaneMetrics } from './runplane-metrics.js';

/**
 * One histogram observation per HTTP response, labelled with the route template Fastify matched
 * (`/v2/:endpointId/run`), never the raw URL; unmatched requests share the label "unmatched".
 * Synchronous and in memory: nothing on the request path waits for it.
 */
export function installHttpMetrics(fastify: FastifyInstance, metrics: RunplaneMetrics): void {
  const histogram = metrics.httpRequestDuration;
  fastify.addHook('onResponse', (request, reply, done) => {
    histogram.observe(
      {
        method: request.method,
        route: request.routeOptions?.url ?? 'unmatched',
        status_code: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
