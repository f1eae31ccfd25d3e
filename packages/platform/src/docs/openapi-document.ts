import type { INestApplication, Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ACCESS_KEY, MANAGEMENT_PATHS, QUERY_KEY_ALLOWED, type Access } from '@runplane/auth';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServiceDescriptor } from '../bootstrap/service-descriptor.js';
import { ERROR_MEANINGS, schemaRef, WILDCARD_EXTENSION } from './decorators.js';
import { dtoSchemas, type JsonSchema } from './request-schemas.js';

/** Where every process serves its document: the UI at `/docs`, the JSON at `/docs/openapi.json`. */
export const DOCS_PATH = '/docs';
export const DOCS_JSON_PATH = '/docs/openapi.json';

const require = createRequire(import.meta.url);
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const DESCRIPTION = `Runplane's HTTP APIs: the RunPod-compatible queue API (\`/v2/{endpointId}/...\`, including
the worker protocol and the OpenAI-compatible routes), the REST API (\`/v1/...\`) and GraphQL
(\`POST /graphql\`; its schema is \`docs/schema.graphql\`).

**Authentication.** Every route but \`/healthz\`, \`/readyz\`, \`/metrics\` and \`/docs\` needs an API key:
\`Authorization: Bearer <key>\` or the bare key as \`Authorization: <key>\`; GraphQL also takes
\`?api_key=<key>\`. A route needs \`read\` (any user key: admin, readwrite, readonly), \`write\` (admin or
readwrite), \`admin\`, or \`worker\` (the endpoint's worker key, or an admin/readwrite key) access: see
\`x-runplane-access\` on each operation. A missing, unknown or under-privileged key is 401.

**Errors**: every queue and REST error is JSON \`{"error", "message", "status", "code"?,
"details"?}\` (\`ErrorBody\`); \`details[].path\` names the offending field of a 400. 500 means a real
fault, never bad input.

**Modes.** A standalone server (\`npm start\`) serves every route of this document on one port. In
cluster mode each service serves, and documents at its own \`/docs\`, only its own routes; an ingress
routes the same paths to them, so clients see this document as a whole.`;

const ACCESS_TEXT: Record<Exclude<Access, 'public'>, string> = {
  read: 'any user key (admin, readwrite, readonly)',
  write: 'an admin or readwrite key',
  admin: 'an admin key',
  worker: "the endpoint's worker key, or an admin or readwrite key",
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- OpenAPI operation objects are free-form JSON
type Operation = Record<string, any>;

/**
 * The OpenAPI 3.1 document of the services running in `app` (a live app or a preview one, see
 * createApiPreview). Routes, tags, summaries and responses come from the controllers' decorators;
 * request bodies and query parameters from their class-validator DTOs; response schemas from the
 * interfaces of @runplane/contracts (dist/response-schemas.json, generated at its build); access
 * levels from the `@RequireAccess`/`@Public` metadata the API key guard enforces.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  services: readonly ServiceDescriptor[],
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Runplane API')
    .setVersion(VERSION)
    .setDescription(DESCRIPTION)
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <key>`' },
      'bearer',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The bare key: `Authorization: <key>` (RunPod clients send both forms).',
      },
      'rawKey',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: 'api_key',
        description: '`?api_key=<key>`: GraphQL only.',
      },
      'queryKey',
    )
    .addSecurityRequirements('bearer')
    .addSecurityRequirements('rawKey');
  for (const tag of services.flatMap((s) => s.openApi?.tags ?? []))
    builder.addTag(tag.name, tag.description);
  builder.addTag('Operations', 'Liveness, readiness, metrics and this document; no API key.');

  const document = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controller, method) =>
      `${controller.replace(/Controller$/, '')}_${method}`,
  });
  const controllers = controllerClasses(app);
  const schemas = new Map<string, { type: Type<unknown>; schema: JsonSchema }>();

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (operation) describeOperation(path, method, operation, controllers, schemas);
    }
  }
  expandWildcards(document);
  uniqueOperationIds(document);
  shareErrorResponses(document);
  for (const service of services) {
    Object.assign(document.paths, service.openApi?.paths as OpenAPIObject['paths'] | undefined);
    if (service.openApi?.webhooks)
      document.webhooks = {
        ...document.webhooks,
        ...service.openApi.webhooks,
      } as OpenAPIObject['webhooks'];
  }
  Object.assign(document.paths, DOCS_PATHS);

  const components: Record<string, JsonSchema> = {
    ...(document.components?.schemas as Record<string, JsonSchema> | undefined),
    ...(require('@runplane/contracts/response-schemas.json') as Record<string, JsonSchema>),
    ...Object.fromEntries([...schemas].map(([name, { schema }]) => [name, schema])),
  };
  document.components = {
    ...document.components,
    schemas: reachableSchemas(document, components) as never,
  };
  document.tags = orderTags(document);
  return document;
}

/** The classes of every provider of `app` (e.g. for the GraphQL schema factory, which keeps the resolvers). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class tokens, typed as Nest and class-validator type them
export function providerClasses(app: INestApplication): Function[] {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class tokens, typed as Nest and class-validator type them
  const classes = new Set<Function>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.providers.values())
      if (typeof wrapper.metatype === 'function') classes.add(wrapper.metatype);
  }
  return [...classes];
}

function controllerClasses(app: INestApplication): Map<string, Type<unknown>> {
  const classes = new Map<string, Type<unknown>>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      if (wrapper.metatype)
        classes.set(
          (wrapper.metatype as Type<unknown>).name.replace(/Controller$/, ''),
          wrapper.metatype as Type<unknown>,
        );
    }
  }
  return classes;
}

/** Access level, DTO-derived parameters and the responses every route of its kind can give. */
function describeOperation(
  path: string,
  method: string,
  operation: Operation,
  controllers: Map<string, Type<unknown>>,
  schemas: Map<string, { type: Type<unknown>; schema: JsonSchema }>,
): void {
  // `<Controller>_<method>`, with `[n]` appended by swagger for the n-th path of a multi-path route.
  const [, controllerName, handlerName] =
    /^(.+)_([^_[]+)(?:\[\d+\])?$/.exec(String(operation.operationId)) ?? [];
  const controller = controllers.get(controllerName);
  const handler = controller?.prototype[handlerName] as object | undefined;
  if (!controller || !handler)
    throw new Error(`OpenAPI: no controller method behind ${method.toUpperCase()} ${path}`);
  operation.operationId = `${controllerName}_${handlerName}`;
  addPathParameters(path, operation);
  const responses = (operation.responses ??= {}) as Record<string, unknown>;
  // A route with a `default` response (the OpenAI routes) renders every error its own way.
  const error = (status: number) => {
    if (!responses.default) responses[status] ??= errorResponse(status);
  };

  const access =
    metadata<Access>(ACCESS_KEY, handler, controller) ??
    (method === 'get' || method === 'head' ? 'read' : 'write');
  if (access === 'public') {
    operation.security = [];
  } else {
    operation['x-runplane-access'] = access;
    operation.description = [operation.description, `Access: ${ACCESS_TEXT[access]}.`]
      .filter(Boolean)
      .join('\n\n');
    if (metadata<boolean>(QUERY_KEY_ALLOWED, handler, controller))
      operation.security = [{ bearer: [] }, { rawKey: [] }, { queryKey: [] }];
    error(401);
    error(500);
  }

  // Bodies and query objects typed with a class-validator DTO are validated by the global pipe.
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<
    string,
    { index: number; data?: unknown }
  >;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, handlerName) ??
    []) as unknown[];
  let validated = false;
  for (const [key, { index, data }] of Object.entries(args)) {
    const kind = Number(key.split(':')[0]);
    const type = types[index];
    if (
      data !== undefined ||
      typeof type !== 'function' ||
      type === Object ||
      (kind !== RouteParamtypes.BODY && kind !== RouteParamtypes.QUERY)
    )
      continue;
    dtoSchemas(type as Type<unknown>, schemas);
    validated = true;
    if (kind === RouteParamtypes.QUERY)
      addQueryParameters(operation, schemas.get(type.name)!.schema);
  }
  if (validated) error(400);
  if (MANAGEMENT_PATHS.test(path))
    responses[429] ??= { $ref: '#/components/responses/ManagementRateLimited' };
}

/** The usual error responses, shared through `components.responses`. */
const ERROR_RESPONSES: Record<string, { status: number; response: object }> = {
  ...Object.fromEntries(
    Object.entries({
      400: 'BadRequest',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'NotFound',
      409: 'Conflict',
      413: 'PayloadTooLarge',
      429: 'TooManyRequests',
      500: 'InternalError',
      503: 'Unavailable',
    }).map(([status, name]) => [
      name,
      {
        status: Number(status),
        response: errorBody(ERROR_MEANINGS[Number(status)], Number(status) === 429),
      },
    ]),
  ),
  ManagementRateLimited: {
    status: 429,
    response: errorBody(
      `${ERROR_MEANINGS[429]} The management APIs (\`/v1\`, \`/graphql\`) allow RUNPLANE_MANAGEMENT_RATE_LIMIT requests per key and 10 s on each instance.`,
      true,
    ),
  },
};

function errorBody(description: string, retryAfter: boolean): object {
  return {
    description,
    ...(retryAfter
      ? {
          headers: {
            'Retry-After': {
              description: 'Seconds to wait before retrying.',
              schema: { type: 'integer' },
            },
          },
        }
      : {}),
    content: { 'application/json': { schema: schemaRef('ErrorBody') } },
  };
}

function errorResponse(status: number): object {
  const name = Object.keys(ERROR_RESPONSES).find((n) => ERROR_RESPONSES[n].status === status);
  return name
    ? { $ref: `#/components/responses/${name}` }
    : errorBody(ERROR_MEANINGS[status] ?? 'Error.', false);
}

/** JSON text with sorted keys, to compare objects built in different orders. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** Error responses declared with their usual meaning (ApiErrors) become refs to the shared ones. */
function shareErrorResponses(document: OpenAPIObject): void {
  const shared = Object.entries(ERROR_RESPONSES).map(([name, { status, response }]) => ({
    name,
    status,
    text: canonical(response),
  }));
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const responses = (item[method] as Operation | undefined)?.responses as
        Record<string, object> | undefined;
      for (const [status, response] of Object.entries(responses ?? {})) {
        const same = shared.find(
          (s) => String(s.status) === status && s.text === canonical(response),
        );
        if (same) responses![status] = { $ref: `#/components/responses/${same.name}` };
      }
    }
  }
  document.components = {
    ...document.components,
    responses: Object.fromEntries(
      Object.entries(ERROR_RESPONSES).map(([name, { response }]) => [name, response]),
    ) as never,
  };
}

/** Every `{name}` of the path is a string parameter (routes reading `@Param()` whole declare none). */
function addPathParameters(path: string, operation: Operation): void {
  const parameters = (operation.parameters ??= []) as Operation[];
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    if (!parameters.some((p) => p.in === 'path' && p.name === name))
      parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
}

function metadata<T>(key: string, handler: object, controller: Type<unknown>): T | undefined {
  return (Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller)) as
    T | undefined;
}

/** One query parameter per DTO property; a description given with @ApiQuery on the route is kept. */
function addQueryParameters(operation: Operation, dto: JsonSchema): void {
  const required = new Set((dto.required ?? []) as string[]);
  const given = new Map(
    ((operation.parameters ?? []) as Operation[])
      .filter((p) => p.in === 'query')
      .map((p) => [p.name as string, p]),
  );
  const others = ((operation.parameters ?? []) as Operation[]).filter(
    (p) => p.in !== 'query' || !(p.name in (dto.properties as object)),
  );
  const query = Object.entries(dto.properties as Record<string, JsonSchema>).map(
    ([name, schema]) => ({
      name,
      in: 'query',
      required: required.has(name),
      ...(given.get(name)?.description ? { description: given.get(name)!.description } : {}),
      ...(given.get(name)?.example !== undefined ? { example: given.get(name)!.example } : {}),
      schema,
    }),
  );
  operation.parameters = [...others, ...query];
}

/** `ApiWildcardPaths(...)` routes: the catch-all path becomes one path per concrete route. */
function expandWildcards(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      const concrete = operation?.[WILDCARD_EXTENSION] as string[] | undefined;
      if (!operation || !concrete) continue;
      const wildcard = /\{([^}]+)\}$/.exec(path);
      if (!wildcard)
        throw new Error(
          `OpenAPI: ${path} has ${WILDCARD_EXTENSION} but does not end in a wildcard`,
        );
      delete item[method];
      delete operation[WILDCARD_EXTENSION];
      for (const sub of concrete) {
        const target = `${path.slice(0, wildcard.index)}${sub}`;
        const suffix = sub
          .split(/[^A-Za-z0-9]+/)
          .filter(Boolean)
          .map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w))
          .join('');
        document.paths[target] ??= {};
        (document.paths[target] as Record<string, unknown>)[method] = {
          ...operation,
          operationId: `${operation.operationId}_${suffix}`,
          parameters: ((operation.parameters ?? []) as Operation[]).filter(
            (p) => !(p.in === 'path' && p.name === wildcard[1]),
          ),
        };
      }
      if (!HTTP_METHODS.some((m) => item[m])) delete document.paths[path];
    }
  }
}

/** Tags in the order a reader needs them: the queue API, then REST, GraphQL, the rest. */
function orderTags(document: OpenAPIObject): OpenAPIObject['tags'] {
  const prefixes = ['/v2/', '/v1/', '/graphql'];
  const rank = (path: string) => {
    const index = prefixes.findIndex((prefix) => path.startsWith(prefix));
    return index < 0 ? prefixes.length : index;
  };
  const first = new Map<string, number>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      for (const tag of ((item[method] as Operation | undefined)?.tags ?? []) as string[])
        first.set(tag, Math.min(first.get(tag) ?? Infinity, rank(path)));
    }
  }
  const tags = document.tags ?? [];
  return tags
    .map((tag, index) => ({ tag, index }))
    .sort(
      (a, b) =>
        (first.get(a.tag.name) ?? Infinity) - (first.get(b.tag.name) ?? Infinity) ||
        a.index - b.index,
    )
    .map(({ tag }) => tag);
}

/** A handler serving several paths (`@Post(['a/:x/:y', 'a/:x'])`) gets one operation id per path. */
function uniqueOperationIds(document: OpenAPIObject): void {
  const seen = new Map<string, number>();
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation?.operationId) continue;
      const count = (seen.get(operation.operationId) ?? 0) + 1;
      seen.set(operation.operationId, count);
      if (count > 1) operation.operationId = `${operation.operationId}_${count}`;
    }
  }
}

/** The document's own routes (served by SwaggerModule, not by a controller). */
const DOCS_PATHS: OpenAPIObject['paths'] = {
  [DOCS_PATH]: {
    get: {
      tags: ['Operations'],
      operationId: 'Docs_ui',
      summary: 'This document in Swagger UI',
      security: [],
      responses: {
        200: { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
      },
    },
  },
  [DOCS_JSON_PATH]: {
    get: {
      tags: ['Operations'],
      operationId: 'Docs_openapi',
      summary: "This process's OpenAPI document",
      security: [],
      description:
        'A standalone server documents every service; in cluster mode each service documents its own routes.',
      responses: {
        200: {
          description: 'OpenAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
  },
};

/** The schemas the paths and webhooks use, directly or through other schemas; a missing one is an error. */
function reachableSchemas(
  document: OpenAPIObject,
  components: Record<string, JsonSchema>,
): Record<string, JsonSchema> {
  const used = new Set<string>();
  const visit = (value: unknown, where: string): void => {
    if (Array.isArray(value)) return value.forEach((v) => visit(v, where));
    if (!value || typeof value !== 'object') return;
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.replace('#/components/schemas/', '');
        if (!components[name])
          throw new Error(
            `OpenAPI: ${where} refers to the unknown schema "${name}" (an interface missing from contracts' scripts/response-schemas.mjs, or a typo)`,
          );
        if (!used.has(name)) {
          used.add(name);
          visit(components[name], `schema ${name}`);
        }
      } else if (key !== '$ref') {
        visit(v, where);
      }
    }
  };
  for (const [path, item] of Object.entries({ ...document.paths, ...document.webhooks }))
    visit(item, path);
  for (const [name, response] of Object.entries(document.components?.responses ?? {}))
    visit(response, `response ${name}`);
  return Object.fromEntries([...used].sort().map((name) => [name, components[name]]));
}
