// Build step: JSON schemas of the response types the HTTP APIs answer with, generated from their
// TypeScript interfaces (the only definition), written to dist/response-schemas.json. The OpenAPI
// document (@runplane/platform, docs/openapi.json) takes them as its response components, so the
// interfaces cannot drift from the docs. Refs point at `#/components/schemas/<Type>`.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createGenerator } from 'ts-json-schema-generator';

/** Interfaces the HTTP routes return (and the error body); their dependencies come along. */
const RESPONSE_TYPES = [
  'JobAccepted',
  'JobRecord',
  'JobDetail',
  'StreamResponse',
  'ListJobsResponse',
  'JobEvent',
  'PurgeResponse',
  'HealthRecord',
  'WorkerJob',
  'JobDoneBody',
  'StopJobsResponse',
  'Ack',
  'Endpoint',
  'EndpointWorker',
  'EndpointMetrics',
  'Template',
  'Pod',
  'NetworkVolume',
  'WorkloadLogLine',
  'ContainerRegistryAuth',
  'User',
  'ApiKeyView',
  'CreatedApiKey',
  'WebhookDeliveryView',
  'ErrorBody',
];

const root = fileURLToPath(new URL('..', import.meta.url));
const generator = createGenerator({
  path: `${root}src/index.ts`,
  tsconfig: `${root}tsconfig.build.json`,
  type: '*',
  expose: 'export',
  topRef: true,
  jsDoc: 'extended',
  // tsc has just checked these sources; responses may carry fields a newer server adds.
  skipTypeCheck: true,
  additionalProperties: true,
  sortProps: false,
});

const schemas = {};
for (const type of RESPONSE_TYPES) Object.assign(schemas, generator.createSchema(type).definitions);
const sorted = Object.fromEntries(
  Object.keys(schemas)
    .sort()
    .map((name) => [name, schemas[name]]),
);
const text = JSON.stringify(sorted, null, 2).replaceAll(
  '"#/definitions/',
  '"#/components/schemas/',
);
writeFileSync(`${root}dist/response-schemas.json`, `${text}\n`);
