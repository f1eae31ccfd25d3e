import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import { PodRpc, SchedulerRpc, TemplateRpc, type TemplatePodUsage } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { secretsVaultService } from '@runplane/secrets-vault';
import { randomBytes } from 'node:crypto';
import { templateGraphqlService } from '../src/index.js';

let seq = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;
const FIELDS =
  'id name imageName containerDiskInGb volumeInGb volumeMountPath dockerArgs ports env { key value } readme isServerless isPublic containerRegistryAuthId category';

interface GqlResponse {
  status: number;
  text: string;
  body: any;
}

describe('template-graphql: POST /graphql', () => {
  let server: TestServer;
  const endpointUsage = new Map<string, number>();
  const podUsage = new Map<string, TemplatePodUsage>();
  let readonlyKey: string;

  /** POST /graphql like the RunPod clients: key in ?api_key= (default) or a Bearer header. */
  const gql = async (
    query: string,
    opts: { key?: string | null; bearer?: boolean; variables?: Record<string, unknown> } = {},
  ): Promise<GqlResponse> => {
    const key = opts.key === undefined ? server.apiKey : opts.key;
    const url = `${server.url}/graphql${key && !opts.bearer ? `?api_key=${encodeURIComponent(key)}` : ''}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key && opts.bearer ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify(opts.variables ? { query, variables: opts.variables } : { query }),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) };
  };
  const data = (res: GqlResponse, field: string) => {
    expect({ status: res.status, errors: res.body.errors }).toEqual({
      status: 200,
      errors: undefined,
    });
    return res.body.data[field];
  };
  /** Contract §2: HTTP 200, data.<field> null, errors[0] {message, path, extensions.code}. */
  const gqlError = (res: GqlResponse, field: string, code: string) => {
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ [field]: null });
    expect(res.body.errors[0]).toMatchObject({
      message: expect.any(String),
      path: [field],
      extensions: { code },
    });
    return res.body.errors[0];
  };
  const save = async (input: string) =>
    data(await gql(`mutation { saveTemplate(input: ${input}) { ${FIELDS} } }`), 'saveTemplate');

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService, templateGraphqlService]);
    // Stand-ins for the scheduler and pod-rest, which say who uses a template.
    await server.bus.serve(SchedulerRpc.templateUsage, async ({ templateId }) => ({
      endpoints: endpointUsage.get(templateId) ?? 0,
    }));
    await server.bus.serve(
      PodRpc.templateUsage,
      async ({ templateId }) => podUsage.get(templateId) ?? { pods: 0, lastUsedAt: null },
    );
    // A readonly key of the admin's user (keys are created by admin routes; here straight in the vault's table).
    readonlyKey = `ro-${randomBytes(16).toString('hex')}`;
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

  describe('authentication', () => {
    it('no key or a wrong key: HTTP 401 with a JSON UNAUTHENTICATED error; ?api_key= and Bearer both work', async () => {
      const query = '{ myself { id } }';
      for (const res of [
        await gql(query, { key: null }),
        await gql(query, { key: 'wrong-key-123456' }),
        await gql(query, { key: 'wrong-key-123456', bearer: true }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({
          errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }],
        });
      }
      expect(data(await gql(query), 'myself')).toEqual({ id: 'usr_admin' });
      expect(data(await gql(query, { bearer: true }), 'myself')).toEqual({ id: 'usr_admin' });
    });

    it('a readonly key may query but a mutation is 401', async () => {
      expect(data(await gql('{ myself { id } }', { key: readonlyKey }), 'myself')).toEqual({
        id: 'usr_admin',
      });
      const res = await gql(
        `mutation { saveTemplate(input: {name: "${uniq('ro')}", imageName: "x:1", containerDiskInGb: 1, volumeInGb: 0}) { id } }`,
        { key: readonlyKey },
      );
      expect(res.status).toBe(401);
      expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    });
  });

  describe('saveTemplate', () => {
    it('creates from the four required fields with the REST defaults; REST sees the same template in its own shape', async () => {
      const name = uniq('create');
      const t = await save(
        `{name: "${name}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 10}`,
      );
      expect(t).toEqual({
        id: expect.stringMatching(/^[a-z0-9]{16}$/),
        name,
        imageName: 'img:1',
        containerDiskInGb: 5,
        volumeInGb: 10,
        volumeMountPath: '/workspace',
        dockerArgs: '',
        ports: '',
        env: [],
        readme: '',
        isServerless: false,
        isPublic: false,
        containerRegistryAuthId: null,
        category: 'NVIDIA',
      });
      expect(
        await server.bus.request(TemplateRpc.get, { ownerId: 'usr_admin', templateId: t.id }),
      ).toMatchObject({ name, dockerStartCmd: [], ports: [], env: {} });
    });

    it('serverless template: dockerArgs <-> dockerStartCmd, comma ports <-> array, {key,value} env <-> map', async () => {
      const t =
        await save(`{name: "${uniq('sls')}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 0, isServerless: true, containerRegistryAuthId: "",
        dockerArgs: "python -u 'my handler.py' --model \\"a b\\"", ports: "8888/http, 22/tcp", env: [{key: "A", value: "1"}, {key: "S", value: "{{ RUNPOD_SECRET_tok }}"}]}`);
      expect(t).toMatchObject({
        isServerless: true,
        volumeInGb: 0,
        ports: '8888/http,22/tcp',
        containerRegistryAuthId: null,
        env: [
          { key: 'A', value: '1' },
          { key: 'S', value: '{{ RUNPOD_SECRET_tok }}' },
        ],
      });
      const rest = await server.bus.request(TemplateRpc.get, {
        ownerId: 'usr_admin',
        templateId: t.id,
      });
      expect(rest).toMatchObject({
        dockerStartCmd: ['python', '-u', 'my handler.py', '--model', 'a b'],
        ports: ['8888/http', '22/tcp'],
        env: { A: '1', S: '{{ RUNPOD_SECRET_tok }}' },
      });
      // The GraphQL string splits back into the same argv.
      expect(t.dockerArgs).toBe("python -u 'my handler.py' --model 'a b'");
      await expect(
        save(
          `{name: "${uniq('sls-vol')}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 20, isServerless: true}`,
        ),
      ).rejects.toThrow();
    });

    it('env names like constructor, toString, valueOf, hasOwnProperty are kept; __proto__ is BAD_USER_INPUT naming it, nothing created', async () => {
      const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', 'A'];
      const env = names.map((key) => ({ key, value: `v-${key}` }));
      // The order of the stored map is the database's: compare sorted by name.
      const sorted = (list: Array<{ key: string; value: string }>) =>
        [...list].sort((a, b) => a.key.localeCompare(b.key));
      const t = data(
        await gql(
          `mutation Save($input: SaveTemplateInput) { saveTemplate(input: $input) { id env { key value } } }`,
          {
            variables: {
              input: {
                name: uniq('odd-env'),
                imageName: 'img:1',
                containerDiskInGb: 1,
                volumeInGb: 0,
                env,
              },
            },
          },
        ),
        'saveTemplate',
      );
      expect(sorted(t.env)).toEqual(sorted(env));
      const read = data(
        await gql(`{ podTemplate(id: "${t.id}") { env { key value } } }`),
        'podTemplate',
      );
      expect(sorted(read.env)).toEqual(sorted(env));
      const rest = await server.bus.request(TemplateRpc.get, {
        ownerId: 'usr_admin',
        templateId: t.id,
      });
      expect(sorted(Object.entries(rest.env).map(([key, value]) => ({ key, value })))).toEqual(
        sorted(env),
      );

      const name = uniq('proto-env');
      const refused = gqlError(
        await gql(
          `mutation { saveTemplate(input: {name: "${name}", imageName: "img:1", containerDiskInGb: 1, volumeInGb: 0, env: [{key: "__proto__", value: "x"}]}) { id } }`,
        ),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
      expect(refused.message).toMatch(/__proto__/);
      const listed = data(await gql('{ podTemplates { name } }'), 'podTemplates');
      expect(listed.map((x: { name: string }) => x.name)).not.toContain(name);
    });

    it('a duplicate name is CONFLICT naming the template, with data.saveTemplate null and nothing created', async () => {
      const name = uniq('dup');
      await save(`{name: "${name}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 0}`);
      const before = data(await gql('{ myself { podTemplates { id } } }'), 'myself').podTemplates
        .length;
      const err = gqlError(
        await gql(
          `mutation { saveTemplate(input: {name: "${name}", imageName: "img:2", containerDiskInGb: 5, volumeInGb: 0}) { id } }`,
        ),
        'saveTemplate',
        'CONFLICT',
      );
      expect(err.message).toContain(name);
      expect(
        data(await gql('{ myself { podTemplates { id } } }'), 'myself').podTemplates.length,
      ).toBe(before);
    });

    it('missing required fields and malformed values are BAD_USER_INPUT with details (arguments are nullable)', async () => {
      const cases: Array<[string, string[]]> = [
        ['{containerDiskInGb: 5, volumeInGb: 0}', ['name', 'imageName']],
        [`{name: "${uniq('x')}", imageName: "i:1", volumeInGb: 0}`, ['containerDiskInGb']],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, ports: "80/udp"}`,
          ['ports'],
        ],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, env: [{key: "", value: "v"}]}`,
          ['env.0.key'],
        ],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, env: [{key: "A", value: "1"}, {key: "A", value: "2"}]}`,
          ['env.1.key'],
        ],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, dockerArgs: "python 'unclosed"}`,
          ['dockerArgs'],
        ],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: -1, volumeInGb: 0}`,
          ['containerDiskInGb'],
        ],
        [
          `{name: "${uniq('x')}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, volumeMountPath: "relative"}`,
          ['volumeMountPath'],
        ],
      ];
      for (const [input, paths] of cases) {
        const err = gqlError(
          await gql(`mutation { saveTemplate(input: ${input}) { id } }`),
          'saveTemplate',
          'BAD_USER_INPUT',
        );
        expect({
          input,
          paths: err.extensions.details.map((d: { path: string }) => d.path),
        }).toEqual({ input, paths });
      }
      gqlError(await gql('mutation { saveTemplate { id } }'), 'saveTemplate', 'BAD_USER_INPUT');
      gqlError(
        await gql('mutation { saveTemplate(input: null) { id } }'),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
    });

    it('with id modifies only the fields sent (required ones resent); works with typed variables declared T or T!', async () => {
      const name = uniq('mod');
      const t = await save(
        `{name: "${name}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 0, isServerless: true, dockerArgs: "node w.mjs", env: [{key: "A", value: "1"}], readme: "r"}`,
      );
      for (const decl of ['SaveTemplateInput!', 'SaveTemplateInput']) {
        const res = await gql(
          `mutation Save($input: ${decl}) { saveTemplate(input: $input) { ${FIELDS} } }`,
          {
            variables: {
              input: {
                id: t.id,
                name,
                imageName: 'img:2',
                containerDiskInGb: 9,
                volumeInGb: 0,
                env: [{ key: 'B', value: '2' }],
              },
            },
          },
        );
        expect(data(res, 'saveTemplate')).toEqual({
          ...t,
          imageName: 'img:2',
          containerDiskInGb: 9,
          env: [{ key: 'B', value: '2' }],
        });
      }
      gqlError(
        await gql(
          `mutation { saveTemplate(input: {id: "${t.id}", name: "${name}", imageName: "i:1", volumeInGb: 0}) { id } }`,
        ),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
      gqlError(
        await gql(
          `mutation { saveTemplate(input: {id: "${t.id}", name: "${name}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0, isServerless: false}) { id } }`,
        ),
        'saveTemplate',
        'BAD_USER_INPUT',
      );
      gqlError(
        await gql(
          `mutation { saveTemplate(input: {id: "nope", name: "${name}", imageName: "i:1", containerDiskInGb: 1, volumeInGb: 0}) { id } }`,
        ),
        'saveTemplate',
        'NOT_FOUND',
      );
    });
  });

  describe('deleteTemplate, queries', () => {
    it('deletes by name (null), refuses while in use (CONFLICT saying why), unknown name NOT_FOUND', async () => {
      const name = uniq('del');
      const t = await save(
        `{name: "${name}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 0}`,
      );
      endpointUsage.set(t.id, 1);
      expect(
        gqlError(
          await gql(`mutation { deleteTemplate(templateName: "${name}") }`),
          'deleteTemplate',
          'CONFLICT',
        ).message,
      ).toMatch(new RegExp(`template "${name}" is in use by 1 serverless endpoint`));
      endpointUsage.delete(t.id);
      podUsage.set(t.id, { pods: 0, lastUsedAt: new Date().toISOString() });
      expect(
        gqlError(
          await gql(`mutation { deleteTemplate(templateName: "${name}") }`),
          'deleteTemplate',
          'CONFLICT',
        ).message,
      ).toMatch(/120 s after its most recent use/);
      podUsage.delete(t.id);
      // Variables declared String! or String (as RunPod's GraphQL schema declares them).
      const res = await gql(
        'mutation Del($name: String!) { deleteTemplate(templateName: $name) }',
        { variables: { name } },
      );
      expect(res.body).toEqual({ data: { deleteTemplate: null } });
      gqlError(
        await gql(`mutation { deleteTemplate(templateName: "${name}") }`),
        'deleteTemplate',
        'NOT_FOUND',
      );
      gqlError(await gql('mutation { deleteTemplate }'), 'deleteTemplate', 'BAD_USER_INPUT');
    });

    it("podTemplate(id), podTemplates and myself.podTemplates list the caller's templates", async () => {
      const t = await save(
        `{name: "${uniq('q')}", imageName: "img:1", containerDiskInGb: 5, volumeInGb: 0}`,
      );
      expect(
        data(await gql(`{ podTemplate(id: "${t.id}") { ${FIELDS} } }`), 'podTemplate'),
      ).toEqual(t);
      expect(data(await gql('{ podTemplates { id } }'), 'podTemplates')).toContainEqual({
        id: t.id,
      });
      expect(
        data(await gql('{ podTemplates(input: {isRunpod: true}) { id } }'), 'podTemplates'),
      ).toEqual([]);
      expect(
        data(await gql('{ myself { podTemplates { id name } } }'), 'myself').podTemplates,
      ).toContainEqual({ id: t.id, name: t.name });
      gqlError(await gql('{ podTemplate(id: "missing") { id } }'), 'podTemplate', 'NOT_FOUND');
    });
  });

  describe('secrets', () => {
    it('secretCreate returns id/name/description, never the value; listed by myself.secrets; secretDelete(id: ID!) returns null', async () => {
      const value = `sv-${randomBytes(12).toString('hex')}`;
      const name = `s_${randomBytes(4).toString('hex')}`;
      const created = await gql(
        `mutation { secretCreate(input: {name: "${name}", value: "${value}", description: "d"}) { id name description createdAt } }`,
      );
      const s = data(created, 'secretCreate');
      expect(s).toEqual({
        id: expect.stringMatching(/^sec_/),
        name,
        description: 'd',
        createdAt: expect.any(String),
      });
      expect(created.text).not.toContain(value);
      const listed = await gql(
        '{ myself { secrets { id name description createdAt updatedAt } } }',
      );
      expect(data(listed, 'myself').secrets).toContainEqual({
        ...s,
        updatedAt: expect.any(String),
      });
      expect(listed.text).not.toContain(value);
      const dup = gqlError(
        await gql(`mutation { secretCreate(input: {name: "${name}", value: "${value}"}) { id } }`),
        'secretCreate',
        'CONFLICT',
      );
      expect(JSON.stringify(dup)).not.toContain(value);
      expect(
        gqlError(
          await gql('mutation { secretCreate(input: {name: "no value"}) { id } }'),
          'secretCreate',
          'BAD_USER_INPUT',
        ).extensions.details.map((d: { path: string }) => d.path),
      ).toEqual(['name', 'value']);

      const del = await gql('mutation Del($id: ID!) { secretDelete(id: $id) }', {
        variables: { id: s.id },
      });
      expect(del.body).toEqual({ data: { secretDelete: null } });
      gqlError(await gql(`mutation { secretDelete(id: "${s.id}") }`), 'secretDelete', 'NOT_FOUND');
    });
  });
});
