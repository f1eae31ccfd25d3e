import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { toRunplaneError } from './error-responses.js';

/** The one exception filter of the HTTP APIs: every error leaves as `{error, message, status, details?}`. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType() !== 'http') throw exception; // GraphQL and bus errors have their own shapes
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    return sendError(reply, exception, this.logger, request);
  }
}

export function sendError(
  reply: FastifyReply,
  exception: unknown,
  logger: Logger,
  request?: FastifyRequest,
): FastifyReply {
  const { error, unexpected } = toRunplaneError(exception);
  if (unexpected)
    logger.error(
      {
        err: exception,
        reqId: request?.id,
        method: request?.method,
        url: request?.routeOptions?.url,
      },
      'request failed',
    );
  if (error.status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
  return reply
    .status(error.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(error.toBody());
}
