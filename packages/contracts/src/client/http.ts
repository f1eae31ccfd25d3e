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
    // Bound: a browser's fetch called as a method of another object throws "Illegal invocation".
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
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

  /**
   * Server-sent events of `path`: each `data:` line's JSON, as it comes, until the server ends the
   * stream or `signal` aborts (then it just ends). An `event: error` becomes a RunplaneError.
   */
  async *events<T>(path: string, signal?: AbortSignal): AsyncGenerator<T, void, void> {
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.base}${path}`, {
        headers: { authorization: `Bearer ${this.options.apiKey}`, accept: 'text/event-stream' },
        signal,
      });
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    if (!res.ok || !res.body) {
      const text = await res.text();
      const json = text ? safeJson(text) : undefined;
      throw RunplaneError.fromBody({
        ...(json && typeof json === 'object' ? json : { message: text || res.statusText }),
        status: res.status,
      });
    }
    const decoder = new TextDecoder();
    let buffered = '';
    let event = 'message';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).replace(/\r$/, '');
          buffered = buffered.slice(newline + 1);
          if (line === '') event = 'message';
          else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) {
            const data = safeJson(line.slice(5).trim());
            if (event === 'error')
              throw RunplaneError.fromBody({ status: 500, ...(data as Partial<ErrorBody>) });
            yield data as T;
          }
        }
      }
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
  }

  /** A GraphQL call at `/graphql`; an answer with `errors` becomes a RunplaneError (NOT_FOUND: 404). */
  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const answer = await this.call<{
      data?: T;
      errors?: { message: string; extensions?: { code?: string } }[];
    }>('POST', '/graphql', { query, variables });
    const error = answer?.errors?.[0];
    if (error) {
      const code = error.extensions?.code;
      const status =
        code === 'NOT_FOUND'
          ? 404
          : code === 'UNAUTHENTICATED'
            ? 401
            : code === 'FORBIDDEN'
              ? 403
              : 400;
      throw new RunplaneError(status, error.message, undefined, code);
    }
    return answer.data as T;
  }
}

/** `path?k=v&…` with the defined values of `params`. */
export function withQuery(
  path: string,
  params: Record<string, string | number | boolean | undefined>,
): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, String(v));
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
