/**
 * The error model of every Runplane API. One class travels everywhere: thrown by a
 * service, carried over the bus as a plain object, and rendered by the HTTP exception filter as
 * `{"error", "message", "status", "details"?}`.
 */
export interface ErrorDetail {
  /** Dotted path of the offending field, e.g. `policy.ttl`. */
  path: string;
  message: string;
}

/** JSON body of every queue and REST error response. */
export interface ErrorBody {
  error: string;
  message: string;
  status: number;
  details?: ErrorDetail[];
  /** Machine-readable reason, e.g. `JOB_NOT_FOUND`. */
  code?: string;
}

/** GraphQL `extensions.code` values. */
export type GraphqlErrorCode =
  'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN' | 'UNAUTHENTICATED';

const DEFAULT_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'TIMEOUT',
};

export class RunplaneError extends Error {
  override readonly name = 'RunplaneError';
  readonly code: string;

  constructor(
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    code?: string,
  ) {
    super(message);
    this.code = code ?? DEFAULT_CODES[status] ?? 'ERROR';
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      error: this.message,
      message: this.message,
      status: this.status,
      code: this.code,
    };
    if (this.details?.length) body.details = this.details;
    return body;
  }

  /** Rebuilds an error that crossed the bus as JSON. */
  static fromBody(body: Partial<ErrorBody>): RunplaneError {
    return new RunplaneError(
      body.status ?? 500,
      body.message ?? body.error ?? 'unknown error',
      body.details,
      body.code,
    );
  }

  static badRequest(message: string, details?: ErrorDetail[]) {
    return new RunplaneError(400, message, details);
  }
  static unauthorized(message = 'missing or invalid API key') {
    return new RunplaneError(401, message);
  }
  static notFound(message: string, code?: string) {
    return new RunplaneError(404, message, undefined, code);
  }
  static conflict(message: string, code?: string) {
    return new RunplaneError(409, message, undefined, code);
  }
  static unavailable(message: string) {
    return new RunplaneError(503, message);
  }
}

export function isRunplaneError(value: unknown): value is RunplaneError {
  return value instanceof RunplaneError;
}
