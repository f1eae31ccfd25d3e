import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';

/**
 * The GraphQL SDL of the code-first schema, printed the way GraphqlApiModule builds it at start
 * (`autoSchemaFile: true, sortSchema: true`): `candidates` are the classes of the application's
 * providers, of which the schema factory keeps the resolvers (as Nest's resolver explorer does).
 * Builds nothing else: no database, no server.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class tokens, typed as Nest and class-validator type them
export async function printGraphqlSchema(candidates: Function[]): Promise<string> {
  const context = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, {
    logger: false,
  });
  try {
    const schema = await context.get(GraphQLSchemaFactory).create(candidates);
    return printSchema(lexicographicSortSchema(schema));
  } finally {
    await context.close();
  }
}

const ERRORS = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      message: { type: 'string' },
      path: { type: 'array', items: {} },
      extensions: { type: 'object', properties: { code: { type: 'string' } } },
    },
  },
};
const RESULT = {
  type: 'object',
  properties: { data: { type: ['object', 'null'] }, errors: ERRORS },
};
const REQUEST = {
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'string', description: 'A GraphQL document.' },
    variables: { type: 'object' },
    operationName: { type: 'string' },
  },
};
const SAVE_TEMPLATE =
  'mutation { saveTemplate(input: {name: "my-worker", imageName: "me/worker:1.0", containerDiskInGb: 10, volumeInGb: 0, isServerless: true, dockerArgs: "python -u handler.py", env: [{key: "MODEL", value: "small"}]}) { id name } }';
const DESCRIPTION = `RunPod's GraphQL API: templates and secrets (\`saveTemplate\` — without \`id\` creates, with \`id\` modifies —,
\`deleteTemplate\`, \`secretCreate\`, \`secretDelete\`, \`podTemplate\`, \`podTemplates\`), and the management operations runpodctl and
runpod-python's management functions send: \`myself\` (pubKey, pods, endpoints, podTemplates, networkVolumes, secrets), \`pod\`,
\`podFindAndDeployOnDemand\`, \`deployCpuPod\`, \`podStop\`, \`podResume\`, \`podTerminate\`, \`gpuTypes\` (\`lowestPrice\`), \`dataCenters\`,
\`serverlessGpuPools\`, \`saveEndpoint\`, \`updateEndpointTemplate\`, \`deleteEndpoint\`, \`updateUserSettings\` — the same operations as REST.
The schema is \`docs/schema.graphql\` (printed from the code; introspection is on). Queries need read access, mutations
write access. A resolver's error is HTTP 200 with \`errors[].extensions.code\` \`BAD_USER_INPUT\`, \`NOT_FOUND\`, \`CONFLICT\` or
\`FORBIDDEN\` and \`data.<field>: null\`.`;

const responses = {
  200: {
    description: 'The result: `data`, and `errors` for what failed.',
    content: { 'application/json': { schema: RESULT } },
  },
  401: {
    description:
      'Missing or wrong key (`UNAUTHENTICATED`), or a key that may not run the operation (`FORBIDDEN`).',
    content: { 'application/json': { schema: { type: 'object', properties: { errors: ERRORS } } } },
  },
  429: { $ref: '#/components/responses/ManagementRateLimited' },
};
const operation = {
  tags: ['GraphQL'],
  security: [{ bearer: [] }, { rawKey: [] }, { queryKey: [] }],
  'x-runplane-access': 'read (queries), write (mutations)',
  responses,
};

/** `/graphql` for the OpenAPI document: Apollo serves it on the Fastify instance, not a controller. */
export const GRAPHQL_OPENAPI_PATHS = {
  '/graphql': {
    post: {
      ...operation,
      operationId: 'Graphql_post',
      summary: 'Run a GraphQL query or mutation',
      description: DESCRIPTION,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: REQUEST,
            examples: { saveTemplate: { value: { query: SAVE_TEMPLATE } } },
          },
        },
      },
    },
    get: {
      ...operation,
      operationId: 'Graphql_get',
      summary: 'Run a GraphQL query (no mutations) from the URL',
      description:
        'Apollo refuses GET requests without `Content-Type: application/json` or an `Apollo-Require-Preflight` header (CSRF prevention).',
      parameters: [
        { name: 'query', in: 'query', required: true, schema: { type: 'string' } },
        {
          name: 'variables',
          in: 'query',
          required: false,
          description: 'JSON text.',
          schema: { type: 'string' },
        },
        { name: 'operationName', in: 'query', required: false, schema: { type: 'string' } },
      ],
    },
  },
};
