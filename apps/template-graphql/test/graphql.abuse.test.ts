import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import { createLogger, startRunplane, type RunningServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { getIntrospectionQuery } from 'graphql';
import { randomBytes } from 'node:crypto';
import { templateGraphqlService } from '../src/index.js';

// Attacks on the GraphQL door with ordinary keys: documents that cost too much, NUL characters
// where the database cannot store them, and values that must not come back in error messages.

interface GqlResponse {
  status: number;
  text: string;
  body: any;
}

describe('template-graphql: abusive requests to POST /graphql', () => {
  let server: RunningServer;
  const apiKey = `test-${randomBytes(16).toString('hex')}`;
  const readonlyKey = `ro-${randomBytes(16).toString('hex')}`;
  /** Every line the server logs, at every level. */
  const logLines: string[] = [];

  const gql = async (
    query: string,
    variables?: Record<string, unknown>,
    key = apiKey,
  ): Promise<GqlResponse> => {
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(variables ? { query, variables } : { query }),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) };
  };
  /** A request refused as a whole: HTTP 4xx, no data, one error with that code. */
  const refused = (res: GqlResponse, status: number, code: string) => {
    expect({
      status: res.status,
      data: res.body.data,
      code: res.body.errors?.[0]?.extensions?.code,
    }).toEqual({
      status,
      data: undefined,
      code,
    });
    return res.body.errors[0].message as string;
  };
  /** A field's error (contract: HTTP 200, data.<field> null). */
  const fieldError = (res: GqlResponse, field: string, code: string) => {
    expect({
      status: res.status,
      data: res.body.data,
      code: res.body.errors?.[0]?.extensions?.code,
    }).toEqual({
      status: 200,
      data: { [field]: null },
      code,
    });
    return res.body.errors[0];
  };
  const templateNames = async (): Promise<string[]> => {
    const res = await gql('{ podTemplates { name } }');
    expect(res.status).toBe(200);
    return res.body.data.podTemplates.map((t: { name: string }) => t.name);
  };

  beforeAll(async () => {
    server = await startRunplane({
      services: [secretsVaultService, templateGraphqlService],
      allInOne: true,
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        RUNPLANE_DATA_DIR: 'memory',
        RUNPLANE_API_KEY: apiKey,
        RUNPLANE_LOG_REQUESTS: 'true',
        LOG_LEVEL: 'trace',
      },
      logger: createLogger({ level: 'trace', destination: { write: (l) => logLines.push(l) } }),
    });
    const { PrismaClient } = await import('../../secrets-vault/dist/generated/prisma/client.js');
    await server.app.get(PrismaClient, { strict: false }).apiKey.create({
      data: {
        id: 'key_ro',
        userId: 'usr_admin',
        name: 'readonly',
        keyHash: hashApiKey(readonlyKey),
        scope: 'readonly',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  describe('document limits (defaults: 15 levels, 30 aliases, 500 fields, 20 root fields, 5000 tokens)', () => {
    it('2,000 aliases are refused with HTTP 400 before anything runs (by the token limit; fewer by the root-field limit)', async () => {
      const aliased = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `a${i}: myself { id secrets { id } }`).join(' ')} }`;
      expect(
        refused(await gql(aliased(2000), undefined, readonlyKey), 400, 'GRAPHQL_PARSE_FAILED'),
      ).toMatch(/5000 tokens/);
      expect(
        refused(await gql(aliased(200), undefined, readonlyKey), 400, 'GRAPHQL_VALIDATION_FAILED'),
      ).toBe('the document exceeds the limit of 20 root fields: split it into smaller requests');
      // Nothing ran: 21 aliased creations create no template, not even the first 20.
      const prefix = `amp-${randomBytes(4).toString('hex')}`;
      const mutation = `mutation { ${Array.from(
        { length: 21 },
        (_, i) =>
          `t${i}: saveTemplate(input: {name: "${prefix}-${i}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0}) { id }`,
      ).join(' ')} }`;
      expect(refused(await gql(mutation), 400, 'GRAPHQL_VALIDATION_FAILED')).toMatch(
        /limit of 20 root fields/,
      );
      expect((await templateNames()).filter((n) => n.startsWith(prefix))).toEqual([]);
    });

    it('each limit names itself and its figure: aliases, depth, fields (fragments counted where spread), root fields, tokens', async () => {
      const aliases = `{ myself { ${Array.from({ length: 31 }, (_, i) => `a${i}: id`).join(' ')} } }`;
      expect(
        refused(await gql(aliases, undefined, readonlyKey), 400, 'GRAPHQL_VALIDATION_FAILED'),
      ).toMatch(/limit of 30 aliases/);
      const deep = `{ ${'a { '.repeat(16)}b${' }'.repeat(16)} }`;
      expect(refused(await gql(deep), 400, 'GRAPHQL_VALIDATION_FAILED')).toMatch(
        /limit of 15 levels of nested fields/,
      );
      // 26 spreads of a 20-field fragment: 521 fields from a short document.
      const fields = `{ myself { ${'...F '.repeat(26)}} } fragment F on User { ${'id '.repeat(20)}}`;
      expect(refused(await gql(fields), 400, 'GRAPHQL_VALIDATION_FAILED')).toMatch(
        /limit of 500 field selections/,
      );
      const roots = `{ ${'myself { id } '.repeat(21)}}`;
      expect(refused(await gql(roots), 400, 'GRAPHQL_VALIDATION_FAILED')).toMatch(
        /limit of 20 root fields/,
      );
      const tokens = `{ myself { ${'id '.repeat(5000)}} }`;
      expect(refused(await gql(tokens), 400, 'GRAPHQL_PARSE_FAILED')).toMatch(
        /Document contains more (than|that) 5000 tokens/,
      );
    });

    it('documents at the limits pass: the standard introspection query, 20 root fields with 30 aliases', async () => {
      const introspection = await gql(
        getIntrospectionQuery({ descriptions: true }),
        undefined,
        readonlyKey,
      );
      expect(introspection.status).toBe(200);
      expect(introspection.body.data.__schema.queryType).toMatchObject({ name: 'Query' });
      // 19 aliased root fields and one with 10 aliased fields: 20 root fields, 30 aliases.
      const atLimits = `{ ${Array.from({ length: 19 }, (_, i) => `r${i}: myself { id }`).join(' ')} last: myself { ${Array.from({ length: 10 }, (_, i) => `i${i}: id`).join(' ')} } }`;
      const res = await gql(atLimits, undefined, readonlyKey);
      expect(res.status).toBe(200);
      expect(res.body.data.last.i9).toBe('usr_admin');
    });
  });

  describe('NUL characters', () => {
    const base = (name: string) =>
      `name: "${name}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0`;

    it('in a template name, image, env key or value, start command or readme: BAD_USER_INPUT naming the field, nothing created', async () => {
      const before = await templateNames();
      const cases: Array<[string, string]> = [
        ['name: "a\\u0000b", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0', 'name'],
        [
          'name: "nul-img", imageName: "i\\u0000:1", containerDiskInGb: 1, volumeInGb: 0',
          'imageName',
        ],
        [`${base('nul-envkey')}, env: [{key: "A\\u0000", value: "v"}]`, 'env'],
        [`${base('nul-envval')}, env: [{key: "A", value: "v\\u0000"}]`, 'env'],
        [`${base('nul-args')}, dockerArgs: "python a\\u0000b"`, 'dockerArgs'],
        [`${base('nul-readme')}, readme: "r\\u0000"`, 'readme'],
        [`${base('nul-mount')}, volumeMountPath: "/w\\u0000"`, 'volumeMountPath'],
      ];
      for (const [input, path] of cases) {
        const err = fieldError(
          await gql(`mutation { saveTemplate(input: {${input}}) { id } }`),
          'saveTemplate',
          'BAD_USER_INPUT',
        );
        expect({
          input,
          paths: err.extensions.details.map((d: { path: string }) => d.path),
        }).toEqual({
          input,
          paths: [path],
        });
        expect(err.message).toMatch(/must not contain a NUL character/);
      }
      // The same through variables, and when modifying a template.
      const viaVariables = fieldError(
        await gql('mutation($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }', {
          input: {
            name: 'nul-var',
            imageName: 'i:1',
            containerDiskInGb: 1,
            volumeInGb: 0,
            env: [{ key: 'K', value: 'x\u0000' }],
          },
        }),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
      expect(viaVariables.extensions.details).toEqual([
        { path: 'env', message: 'env names and values must not contain a NUL character' },
      ]);
      const created = await gql(`mutation { saveTemplate(input: {${base('nul-mod')}}) { id } }`);
      const id = created.body.data.saveTemplate.id;
      const modified = fieldError(
        await gql(
          `mutation { saveTemplate(input: {id: "${id}", ${base('nul\\u0000mod')}}) { id } }`,
        ),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
      expect(modified.extensions.details.map((d: { path: string }) => d.path)).toEqual(['name']);
      expect((await templateNames()).sort()).toEqual([...before, 'nul-mod'].sort());
    });

    it('in ids and names looked up (template, secret, registry auth): 4xx, never INTERNAL_SERVER_ERROR', async () => {
      const lookups: Array<[string, string]> = [
        ['{ podTemplate(id: "a\\u0000b") { id } }', 'podTemplate'],
        [
          `mutation { saveTemplate(input: {id: "a\\u0000b", ${base('x')}}) { id } }`,
          'saveTemplate',
        ],
        ['mutation { deleteTemplate(templateName: "a\\u0000b") }', 'deleteTemplate'],
        ['mutation { secretDelete(id: "sec_\\u0000") }', 'secretDelete'],
        ['mutation { secretCreate(input: {name: "s", value: "v\\u0000"}) { id } }', 'secretCreate'],
        ['mutation { deleteRegistryAuth(registryAuthId: "a\\u0000") }', 'deleteRegistryAuth'],
      ];
      for (const [query, field] of lookups) {
        const res = await gql(query);
        expect({
          query,
          status: res.status,
          data: res.body.data,
          code: res.body.errors?.[0]?.extensions?.code,
        }).toEqual({
          query,
          status: 200,
          data: { [field]: null },
          code: expect.stringMatching(/^(BAD_USER_INPUT|NOT_FOUND)$/),
        });
      }
      // Through a variable declared as the clients do.
      fieldError(
        await gql('query GetTemplate($id: String!) { podTemplate(id: $id) { id } }', {
          id: 'x\u0000',
        }),
        'podTemplate',
        'BAD_USER_INPUT',
      );
    });
  });

  describe('values never come back in error messages nor go to the log', () => {
    const secret = `S3CR3T-${randomBytes(8).toString('hex')}`;
    const number = 918273645;

    it('variables of the wrong type: the message names the variable, the path and the expected type, never the value', async () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        [
          'mutation($input: SecretCreateInput) { secretCreate(input: $input) { id } }',
          { input: { name: 'x', value: number } },
          'Variable "$input" got an invalid value at "input.value"; String cannot represent a non string value',
        ],
        [
          'mutation($input: SecretCreateInput) { secretCreate(input: $input) { id } }',
          { input: { name: 'x', value: { s: secret } } },
          'Variable "$input" got an invalid value at "input.value"; String cannot represent a non string value',
        ],
        [
          'mutation($input: SaveRegistryAuthInput) { saveRegistryAuth(input: $input) { id } }',
          { input: { name: 'r', username: 'u', password: [secret] } },
          'Variable "$input" got an invalid value at "input.password"; String cannot represent a non string value',
        ],
        [
          'mutation($input: UpdateRegistryAuthInput!) { updateRegistryAuth(input: $input) { id } }',
          { input: { id: 'x', username: 'u', password: number } },
          'Variable "$input" got an invalid value at "input.password"; String cannot represent a non string value',
        ],
        [
          'mutation($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }',
          { input: { name: 't', env: [{ key: 'TOKEN', value: { v: secret } }] } },
          'Variable "$input" got an invalid value at "input.env[0].value"; String cannot represent a non string value',
        ],
        [
          'mutation($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }',
          { input: { name: 't', containerDiskInGb: secret } },
          'Variable "$input" got an invalid value at "input.containerDiskInGb"; Int cannot represent non-integer value',
        ],
        [
          'mutation($input: SaveRegistryAuthInput) { saveRegistryAuth(input: $input) { id } }',
          { input: { name: 'r', username: 'u', password: secret, token: secret } },
          'Variable "$input" got an invalid value; Field "token" is not defined by type "SaveRegistryAuthInput".',
        ],
        [
          'mutation($input: SecretCreateInput) { secretCreate(input: $input) { id } }',
          { input: secret },
          'Variable "$input" got an invalid value; Expected type "SecretCreateInput" to be an object.',
        ],
      ];
      for (const [query, variables, message] of cases) {
        const res = await gql(query, variables);
        expect({ variables, message: refused(res, 400, 'BAD_USER_INPUT') }).toEqual({
          variables,
          message,
        });
        expect(res.text).not.toContain(secret);
        expect(res.text).not.toContain(String(number));
      }
    });

    it('literals of the wrong type in the document are refused without their value', async () => {
      const res = await gql(
        `mutation { secretCreate(input: {name: "x", value: ${number}}) { id } }`,
      );
      expect(refused(res, 400, 'GRAPHQL_VALIDATION_FAILED')).toBe(
        'String cannot represent a non string value',
      );
      expect(res.text).not.toContain(String(number));
    });

    it('the server log holds none of the values sent above', () => {
      expect(logLines.length).toBeGreaterThan(0);
      const leaked = logLines.filter((l) => l.includes(secret) || l.includes(String(number)));
      expect(leaked).toEqual([]);
    });
  });
});
