import { RunplaneError, type ErrorBody } from '../errors/runplane-error.js';

export interface ClientOptions {
  /** Server root, e.g. `http://localhost:8080` (queue at /v2, REST at /v1, GraphQL at /graphql). */
  baseUrl: string;
  apiKey: string;
  /** Per-request timeout in ms (default 30 s; long polls add their wait to it). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Minimal JSON-over-HTTP caller shared by the typed clients; non-2xx answers become RunplaneError. */
export class HttpCaller {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    extra: { timeoutMs?: number; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      ...extra.headers,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.fetchImpl(`${this.base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(extra.timeoutMs ?? this.options.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    const json = text ? safeJson(text) : undefined;
    if (!res.ok) {
      const errorBody = (
        json && typeof json === 'object'
          ? json
          : { status: res.status, message: text || res.statusText }
      ) as Partial<ErrorBody>;
      throw RunplaneError.fromBody({ ...errorBody, status: res.status });
    }
    return json as T;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
