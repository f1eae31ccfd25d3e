import { RunplaneError, type ErrorBody } from '@runplane/contracts';

/** Reply envelope of every request, identical on both buses so errors survive the trip. */
export type RpcReply<T> = { ok: true; data: T } | { ok: false; error: ErrorBody };

export function replyFromError(err: unknown, subject: string): RpcReply<never> {
  if (err instanceof RunplaneError) return { ok: false, error: err.toBody() };
  if (isUnstorableText(err)) return { ok: false, error: UNSTORABLE_TEXT().toBody() };
  const status = httpStatusOf(err);
  if (status && status < 500) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, error: new RunplaneError(status, message).toBody() };
  }
  // Unknown faults are not leaked to the caller; the serving side logs them.
  return {
    ok: false,
    error: new RunplaneError(500, `internal error while handling ${subject}`).toBody(),
  };
}

export function unwrapReply<T>(reply: RpcReply<T>): T {
  if (reply.ok) return reply.data;
  throw RunplaneError.fromBody(reply.error);
}

/** Status of an HttpException-like error (Nest's, or anything with getStatus()/status). */
function httpStatusOf(err: unknown): number | undefined {
  if (err && typeof err === 'object') {
    const e = err as { getStatus?: () => number; status?: unknown };
    if (typeof e.getStatus === 'function') return e.getStatus();
    if (typeof e.status === 'number') return e.status;
  }
  return undefined;
}

/** Deep copy through JSON: what a handler receives is exactly what a network bus would carry. */
export function viaJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * PostgreSQL refuses text it cannot store (a NUL character, SQLSTATE 22021 / 22P05). That is the
 * caller's input, not a fault: the statement changed nothing, so it is a 400.
 */
export function isUnstorableText(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return /Code: `(22021|22P05)`|invalid byte sequence for encoding|unsupported Unicode escape sequence/.test(
    message,
  );
}

export const UNSTORABLE_TEXT = () =>
  RunplaneError.badRequest('text values must not contain NUL (\\u0000) characters');
