import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { consoleRouteUrls, startTestServer, type TestServer } from '@runplane/platform';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  buildClientSchema,
  getIntrospectionQuery,
  lexicographicSortSchema,
  printSchema,
  type IntrospectionQuery,
} from 'graphql';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ALL_SERVICES } from '../src/services.js';

// A standalone server (every service, in memory) serves its API reference at /docs; the document
// is valid OpenAPI 3.1, equals the committed docs/openapi.json, and lists exactly the routes the
// HTTP server registered. docs/schema.graphql is the schema the server introspects to.

const DOCS = fileURLToPath(new URL('../../../docs/', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

type Document = { openapi: string; paths: Record<string, Record<string, unknown>> };

/** Fastify's `/v2/:endpointId/status/:jobId` as an OpenAPI path; a trailing `*` stays a prefix. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

describe('the API reference served at /docs', () => {
  let server: TestServer;
  let served: Document;

  beforeAll(async () => {
    server = await startTestServer(Object.values(ALL_SERVICES));
    const res = await fetch(`${server.url}/docs/openapi.json`); // no API key: the reference is public
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    served = (await res.json()) as Document;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(served as never);
    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
    // ...and the validator does refuse a broken one (a parameter without `in`).
    const broken = structuredClone(served) as Document & {
      paths: Record<string, Record<string, { parameters?: unknown[] }>>;
    };
    broken.paths['/healthz'].get.parameters = [{ name: 'x' }];
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });

  it('is the committed docs/openapi.json', () => {
    expect(served).toEqual(JSON.parse(readFileSync(`${DOCS}openapi.json`, 'utf8')));
  });

  it('documents every route the server registered, and nothing else', () => {
    const consoleRoutes = consoleRouteUrls();
    const documented = Object.entries(served.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const registered = server.routes
      // HEAD is Fastify's automatic twin of each GET; OPTIONS is Apollo's CORS preflight.
      .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
      // Swagger UI's own files; /docs and /docs/openapi.json are documented.
      .filter((r) => !(r.url.startsWith('/docs/') && r.url !== '/docs/openapi.json'))
      // The console's page, its pages' paths and its files: a web UI, not part of the API.
      .filter((r) => !consoleRoutes.includes(r.url))
      .map((r) => `${r.method} ${openApiPath(r.url)}`);
    const covers = (route: string, operation: string) =>
      route.endsWith('*') ? operation.startsWith(route.slice(0, -1)) : operation === route;
    expect(registered.filter((route) => !documented.some((op) => covers(route, op)))).toEqual([]);
    expect(documented.filter((op) => !registered.some((route) => covers(route, op)))).toEqual([]);
    expect(registered.length).toBeGreaterThan(50);
    expect(server.routes.filter((r) => consoleRoutes.includes(r.url)).length).toBeGreaterThan(2);
  });

  it('serves Swagger UI at /docs with its assets, without a CDN', async () => {
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg)/);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-ui-init.js']) {
      const res = await fetch(`${server.url}/docs/${asset}`);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      await res.arrayBuffer();
    }
    // Nothing else of swagger-ui-dist's directory is reachable.
    const other = await fetch(`${server.url}/docs/package.json`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ status: 404 });
  });

  it('docs/schema.graphql is the schema /graphql answers introspection with', async () => {
    const res = await fetch(`${server.url}/graphql?api_key=${server.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: getIntrospectionQuery() }),
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: IntrospectionQuery };
    const live = printSchema(lexicographicSortSchema(buildClientSchema(data)));
    const committed = readFileSync(`${DOCS}schema.graphql`, 'utf8').replace(/^(#.*\n)+\n/, '');
    expect(committed).toBe(`${live}\n`);
  });
});
