import { RunplaneError } from '@runplane/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';

/**
 * A bound on the bytes of request bodies being received at once, across every request of the
 * process. Bodies are buffered whole and then copied a few times on their way in (text, parsed
 * value, stored copies), so unbounded concurrency of large bodies runs the process out of memory.
 * A body with a Content-Length reserves it before a byte is read; a chunked one reserves as it
 * arrives. The reservation ends with the response. A body that does not fit gets 503 with
 * Retry-After; nothing of it reaches a handler.
 */
export function installBodyBudget(fastify: FastifyInstance, maxBytes: number): void {
  if (maxBytes <= 0) return;
  let inFlight = 0;

  const busy = (reply: FastifyReply) => {
    reply.header('retry-after', '1');
    return new RunplaneError(
      503,
      `the server is receiving too many request bodies at once (${maxBytes} bytes in all); retry shortly`,
      undefined,
      'BODIES_IN_FLIGHT',
    );
  };

  fastify.addHook(
    'preParsing',
    async (request: FastifyRequest, reply: FastifyReply, payload: Readable) => {
      let held = 0;
      const reserve = (bytes: number) => {
        if (inFlight + bytes > maxBytes) return false;
        inFlight += bytes;
        held += bytes;
        return true;
      };
      // 'close' comes once for every response: sent, failed or abandoned by the client.
      reply.raw.once('close', () => {
        inFlight -= held;
        held = 0;
      });

      const declared = Number(request.headers['content-length']);
      // Over the server-wide body limit: Fastify answers 413 without reading it.
      if (declared > fastify.initialConfig.bodyLimit!) return payload;
      if (Number.isFinite(declared)) {
        if (!reserve(declared)) throw busy(reply);
        return payload;
      }
      if (request.headers['transfer-encoding'] === undefined) return payload; // no body
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          done(reserve(chunk.length) ? null : busy(reply), chunk);
        },
      });
      payload.on('error', (err) => counted.destroy(err));
      return payload.pipe(counted);
    },
  );
}
