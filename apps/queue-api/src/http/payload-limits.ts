import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { JOB_LIMITS, RunplaneError } from '@runplane/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';

/**
 * Body limits of the submission routes, by method and route pattern. The server-wide
 * Fastify bodyLimit is only a little over the largest of them.
 */
export const PAYLOAD_LIMITS: Readonly<Record<string, number>> = {
  'POST /v2/:endpointId/run': JOB_LIMITS.payloadBytes.run,
  'POST /v2/:endpointId/runsync': JOB_LIMITS.payloadBytes.runsync,
  'POST /v2/:endpointId/openai/*': JOB_LIMITS.payloadBytes.runsync, // a synchronous submission too
};

function limitOf(request: FastifyRequest): number | undefined {
  return PAYLOAD_LIMITS[`${request.method} ${request.routeOptions?.url ?? ''}`];
}

function tooLarge(request: FastifyRequest, limit: number, path: string): RunplaneError {
  lingerAndDrop(request);
  const mb = limit / (1024 * 1024);
  return new RunplaneError(
    413,
    `request body is larger than the ${mb} MB limit of ${path} (${limit} bytes)`,
  );
}

/** How much of a refused body is read and dropped, and for how long, before the connection is cut. */
const LINGER_BYTES = 2 * JOB_LIMITS.payloadBytes.runsync;
const LINGER_MS = 30_000;

/**
 * The client may still be sending the rest of a refused body. The answer goes out at once; the
 * rest is read and dropped (as nginx's lingering close does) instead of the connection being
 * closed under the client's writes, which resets it and can make the client or a proxy in between
 * lose the answer. Bounded: past LINGER_BYTES or LINGER_MS the connection is cut anyway.
 */
function lingerAndDrop(request: FastifyRequest): void {
  const raw = request.raw;
  let dropped = 0;
  const cut = () => raw.socket?.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/**
 * Rejects oversized submissions with 413 before their body is read: from Content-Length as soon as
 * the headers arrive (clients sending 10 MB must see the answer while they are still writing), and
 * by counting bytes for chunked bodies that carry no length.
 */
@Injectable()
export class PayloadLimits implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    // Routes are registered by now, but Fastify attaches hooks to them only when it boots (listen).
    const fastify = this.adapterHost.httpAdapter.getInstance() as unknown as FastifyInstance;
    fastify.addHook('onRequest', async (request) => {
      const limit = limitOf(request);
      if (limit === undefined) return;
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit)
        throw tooLarge(request, limit, request.routeOptions.url!.replace('/v2/:endpointId', ''));
    });
    fastify.addHook('preParsing', async (request, reply, payload: Readable) => {
      const limit = limitOf(request);
      if (limit === undefined || request.headers['content-length'] !== undefined) return payload;
      let seen = 0;
      const capped = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          seen += chunk.length;
          done(
            seen > limit
              ? tooLarge(request, limit, request.routeOptions.url!.replace('/v2/:endpointId', ''))
              : null,
            chunk,
          );
        },
      });
      payload.on('error', (err) => capped.destroy(err));
      return payload.pipe(capped);
    });
  }
}
