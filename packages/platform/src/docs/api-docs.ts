import type { INestApplication } from '@nestjs/common';
import { SwaggerModule } from '@nestjs/swagger';
import { RunplaneError } from '@runplane/contracts';
import type { FastifyInstance } from 'fastify';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ServiceDescriptor } from '../bootstrap/service-descriptor.js';
import { buildOpenApiDocument, DOCS_JSON_PATH, DOCS_PATH } from './openapi-document.js';

/** The files of swagger-ui-dist the UI page loads (relative to `/docs/`), with their types. */
const UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};
const UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Serves the process's API reference without an API key: Swagger UI at `/docs` and the OpenAPI
 * document at `/docs/openapi.json`, built on the first request (starting a server costs nothing).
 *
 * SwaggerModule.setup would serve the UI's files through @fastify/static, whose current major
 * loads an ESM-only dependency with require(): Jest cannot do that on Node 20 and Nest exits the
 * process when it fails. So the page, its init script and the JSON come from SwaggerModule's own
 * (protected, meant for subclasses) serveDocuments, and the five static files from plain routes.
 */
class ApiDocsModule extends SwaggerModule {
  static serve(app: INestApplication, services: readonly ServiceDescriptor[]): void {
    this.serveDocuments(
      DOCS_PATH,
      DOCS_PATH.slice(1),
      app.getHttpAdapter(),
      () => buildOpenApiDocument(app, services),
      {
        ui: true,
        raw: ['json'],
        jsonDocumentUrl: DOCS_JSON_PATH,
        yamlDocumentUrl: `${DOCS_PATH}/openapi.yaml`,
        swaggerOptions: {
          customSiteTitle: 'Runplane API',
          swaggerOptions: { displayOperationId: true },
        },
      },
    );
    const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
    fastify.get<{ Params: { asset: string } }>(`${DOCS_PATH}/:asset`, (request, reply) => {
      const type = Object.hasOwn(UI_ASSETS, request.params.asset)
        ? UI_ASSETS[request.params.asset]
        : undefined;
      if (!type) throw RunplaneError.notFound(`no route GET ${request.url.split('?')[0]}`);
      return reply
        .type(type)
        .header('cache-control', 'public, max-age=3600')
        .send(createReadStream(path.join(UI_DIR, request.params.asset)));
    });
  }
}

export function installApiDocs(
  app: INestApplication,
  services: readonly ServiceDescriptor[],
): void {
  ApiDocsModule.serve(app, services);
}
