import { HttpException } from '@nestjs/common';
import { isUnstorableText, UNSTORABLE_TEXT } from '@runplane/bus';
import { RunplaneError } from '@runplane/contracts';

/** Fastify's own errors (body parsing, limits) mapped to what a client should read. */
const FASTIFY_ERRORS: Record<string, (err: { message: string }) => RunplaneError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new RunplaneError(413, 'request body is larger than this route accepts'),
  FST_ERR_CTP_INVALID_JSON_BODY: (e) =>
    RunplaneError.badRequest(
      `request body is not valid JSON: ${e.message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'/, 'parse error')}`,
    ),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    RunplaneError.badRequest('request body is empty; send a JSON object'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new RunplaneError(415, 'unsupported content-type; send application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    RunplaneError.badRequest('request body does not match its content-length'),
  FST_ERR_BAD_URL: () => RunplaneError.badRequest('malformed URL'),
};

/**
 * Turns anything thrown while serving a request into the contract's error. Unknown errors
 * become a 500 without their message (it may hold internals); the caller logs them.
 */
export function toRunplaneError(err: unknown): { error: RunplaneError; unexpected: boolean } {
  if (err instanceof RunplaneError) return { error: err, unexpected: false };
  if (isUnstorableText(err)) return { error: UNSTORABLE_TEXT(), unexpected: false };
  const code = (err as { code?: string })?.code;
  if (code && FASTIFY_ERRORS[code])
    return { error: FASTIFY_ERRORS[code](err as Error), unexpected: false };
  if (err instanceof SyntaxError && 'body' in err)
    return { error: RunplaneError.badRequest('request body is not valid JSON'), unexpected: false };
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const response = err.getResponse();
    const message =
      typeof response === 'string' ? response : (response as { message?: unknown }).message;
    const text = Array.isArray(message) ? message.join('; ') : String(message ?? err.message);
    return {
      error: new RunplaneError(
        status,
        status === 404 && /^Cannot /.test(text) ? `no route ${text.replace(/^Cannot /, '')}` : text,
      ),
      unexpected: status >= 500,
    };
  }
  const statusCode = (err as { statusCode?: number })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return {
      error: new RunplaneError(statusCode, (err as Error).message || 'bad request'),
      unexpected: false,
    };
  }
  return { error: new RunplaneError(500, 'internal server error'), unexpected: true };
}
