import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** Body bytes written before the answer arrived (0: decided from the headers alone). */
  bodyBytesSent: number;
}

export interface RawRequestOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with `transfer-encoding: chunked` instead of a Content-Length. */
  chunked?: boolean;
  /** How long to wait for an early answer after the headers before sending the body. */
  holdBodyMs?: number;
}

/**
 * One HTTP/1.1 request over a plain socket that keeps reading while it writes, so an answer sent
 * before the body was read (413 from Content-Length) is seen, as the conformance suite does.
 */
export function rawRequest(
  method: string,
  url: string,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  const { headers = {}, chunked = false, holdBodyMs = 0 } = options;
  const u = new URL(url);
  const payload = Buffer.from(options.body ?? '');
  const head: Record<string, string> = { host: u.host, connection: 'close', ...headers };
  if (chunked) head['transfer-encoding'] = 'chunked';
  else head['content-length'] = String(payload.length);
  const text = `${method} ${u.pathname}${u.search} HTTP/1.1\r\n${Object.entries(head)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: u.hostname, port: Number(u.port) });
    let received = Buffer.alloc(0);
    let sent = 0;
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      const sep = received.indexOf('\r\n\r\n');
      if (sep < 0) {
        if (closed) {
          settled = true;
          reject(new Error('connection closed before a complete response'));
        }
        return;
      }
      const lines = received.subarray(0, sep).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
      const hdrs = new Headers();
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) hdrs.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      const length = Number(hdrs.get('content-length') ?? NaN);
      const rest = received.subarray(sep + 4);
      if (!closed && (Number.isNaN(length) || rest.length < length)) return;
      settled = true;
      sock.destroy();
      const body = (Number.isNaN(length) ? rest : rest.subarray(0, length)).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ status, headers: hdrs, text: body, json, bodyBytesSent: sent });
    };
    sock.on('data', (d) => {
      received = Buffer.concat([received, d]);
      finish(false);
    });
    sock.on('close', () => finish(true));
    sock.on('error', (err) => {
      if (received.length) finish(true);
      else if (!settled) {
        settled = true;
        reject(err);
      }
    });
    sock.once('connect', async () => {
      sock.write(text);
      for (let waited = 0; waited < holdBodyMs && received.length === 0; waited += 25)
        await new Promise((r) => setTimeout(r, 25));
      const pump = () => {
        while (sent < payload.length && received.length === 0 && !sock.destroyed) {
          const piece = payload.subarray(sent, sent + 65536);
          sent += piece.length;
          const ok = sock.write(
            chunked
              ? Buffer.concat([
                  Buffer.from(`${piece.length.toString(16)}\r\n`),
                  piece,
                  Buffer.from('\r\n'),
                ])
              : piece,
          );
          if (!ok) {
            sock.once('drain', pump);
            return;
          }
        }
        if (sent >= payload.length && chunked && !sock.destroyed) sock.write('0\r\n\r\n');
      };
      pump();
    });
  });
}
