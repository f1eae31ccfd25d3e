// A small keep-alive JSON client for Runplane's public HTTP API.
import http from 'node:http';

export function apiClient(apiKey) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  function request(base, method, urlPath, body) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        new URL(urlPath, base),
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${apiKey}`,
            ...(payload
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            if (res.statusCode < 200 || res.statusCode > 299)
              reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${text.slice(0, 300)}`));
            else resolve(json);
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
  return { request, close: () => agent.destroy() };
}
