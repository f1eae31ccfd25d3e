// A small keep-alive JSON client for Runplane's public HTTP API.
import http from 'node:http';

export function apiClient(apiKey) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  /**
   * One call, whatever its status: `{status, json, text, headers}` (json undefined when the body
   * is not JSON). `headers` are sent besides the key; with `timeoutMs`, a call without an answer
   * by then rejects with an error whose `code` is TIMEOUT (socket errors keep their own code).
   */
  function answer(base, method, urlPath, body, { headers = {}, timeoutMs } = {}) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        new URL(urlPath, base),
        {
          method,
          agent,
          timeout: timeoutMs,
          headers: {
            authorization: `Bearer ${apiKey}`,
            ...(payload
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
              : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode, json, text, headers: res.headers });
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(
          Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'TIMEOUT' }),
        ),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The JSON body of a 2xx answer; any other status rejects. */
  async function request(base, method, urlPath, body) {
    const res = await answer(base, method, urlPath, body);
    if (res.status < 200 || res.status > 299)
      throw new Error(`${method} ${urlPath}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json;
  }

  return { request, answer, close: () => agent.destroy() };
}
