import { Catch, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LOGGER, toRunplaneError, type Logger } from '@runplane/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The job ran and ended this way: sending the request again would run it again. */
const JOB_OUTCOMES = new Set(['JOB_FAILED', 'JOB_TIMED_OUT', 'JOB_CANCELLED']);

/** OpenAI's `error.type` for our statuses (what OpenAI's own API answers for the same situations). */
function openAiType(status: number, code: string): string {
  if (JOB_OUTCOMES.has(code)) return 'worker_error';
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * Errors of the OpenAI-compatible route in OpenAI's shape, `{"error": {message, type, param,
 * code}}`, which OpenAI SDKs parse into their APIError (the queue API's own shape elsewhere).
 * Covers errors of the guard, limits and validation of these routes too.
 */
@Catch()
export class OpenAiErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const { error, unexpected } = toRunplaneError(exception);
    if (unexpected)
      this.logger.error(
        { err: exception, reqId: request.id, url: request.url },
        'openai request failed',
      );
    if (error.status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
    // OpenAI's SDKs retry 409 and 5xx answers (twice by default) unless told not to: a job the
    // worker failed, that timed out or was cancelled would only run again as a new job.
    if (JOB_OUTCOMES.has(error.code)) reply.header('x-should-retry', 'false');
    return reply
      .status(error.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send({
        error: {
          message: error.message,
          type: openAiType(error.status, error.code),
          param: error.details?.[0]?.path ?? null,
          code: error.code,
        },
      });
  }
}
