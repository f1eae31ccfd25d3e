import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestServer, type TestServer } from '../src/index.js';

// The console's files at / (the browser suite in packages/e2e drives the page itself): served by a
// standalone server unless RUNPLANE_CONSOLE=false, with the page's and the assets' headers, only
// for the console's own paths.
describe('the console at /', () => {
  let on: TestServer;
  let off: TestServer;

  beforeAll(async () => {
    [on, off] = await Promise.all([
      startTestServer([]),
      startTestServer([], { RUNPLANE_CONSOLE: 'false' }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([on?.stop(), off?.stop()]);
  });

  it('answers its page at / and at its pages’ paths, not cached, under a strict CSP', async () => {
    for (const path of ['/', '/endpoints', '/endpoints/ep1/requests/job1', '/keys']) {
      const res = await fetch(`${on.url}${path}`);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([
        path,
        200,
        'text/html; charset=utf-8',
      ]);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toMatch(
        /default-src 'none'; script-src 'self'/,
      );
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(await res.text()).toContain('<div id="root"></div>');
    }
  });

  it('serves its hashed files for a year; anything else is the JSON 404', async () => {
    const page = await (await fetch(`${on.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1];
    const asset = await fetch(`${on.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    for (const path of [
      '/assets/nope.js',
      '/assets/..%2F..%2Fpackage.json',
      '/endpointsx',
      '/v1/nope',
    ]) {
      const res = await fetch(`${on.url}${path}`);
      expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([
        path,
        404,
        'NOT_FOUND',
      ]);
    }
  });

  it('is not served with RUNPLANE_CONSOLE=false', async () => {
    const res = await fetch(`${off.url}/`);
    expect(res.status).toBe(404);
    expect(off.routes.some((r) => r.url === '/')).toBe(false);
  });
});
