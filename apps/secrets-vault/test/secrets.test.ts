import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunplaneError, VaultRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { BOOTSTRAP_USER_ID } from '../src/apikeys/apikeys.repository.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';

const OWNER = BOOTSTRAP_USER_ID;

describe('secrets-vault: secrets over the bus', () => {
  let server: TestServer;
  let db: PrismaClient;
  const masterKey = randomBytes(32).toString('base64');
  beforeAll(async () => {
    server = await startTestServer([secretsVaultService], { RUNPLANE_MASTER_KEY: masterKey });
    db = server.app.get(PrismaClient, { strict: false });
    await db.user.create({ data: { id: 'usr_bob', name: 'bob' } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const create = (
    name: string,
    value: string,
    extra: { description?: string; ownerId?: string } = {},
  ) =>
    server.bus.request(VaultRpc.createSecret, {
      ownerId: extra.ownerId ?? OWNER,
      secret: { name, value, description: extra.description },
    });

  it('creates a secret: the answer and the listing never hold the value; the table holds ciphertext only', async () => {
    const value = `plain-${randomBytes(8).toString('hex')}`;
    const s = await create('api_key', value, { description: 'for the model' });
    expect(s).toEqual({
      id: expect.stringMatching(/^sec_/),
      name: 'api_key',
      description: 'for the model',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const listed = await server.bus.request(VaultRpc.listSecrets, { ownerId: OWNER });
    expect(listed).toContainEqual(s);
    expect(JSON.stringify(listed)).not.toContain(value);

    // Plain-text search over everything the vault stores.
    const tables = await db.$queryRawUnsafe<Array<{ t: string }>>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'secrets_vault'`,
    );
    expect(tables.map((r) => r.t)).toContain('Secret');
    for (const { t } of tables) {
      const rows = await db.$queryRawUnsafe<Array<{ row: string }>>(
        `SELECT x::text AS row FROM secrets_vault."${t}" x`,
      );
      for (const { row } of rows) {
        expect(row).not.toContain(value);
        expect(row).not.toContain(Buffer.from(value).toString('hex'));
      }
    }
    const row = await db.secret.findUniqueOrThrow({ where: { id: s.id } });
    expect(row.keyId).toMatch(/^mk_[0-9a-f]{16}$/);
    expect(row.ciphertext.length).toBeGreaterThan(28);
  });

  it('names are unique per owner (409), must be referenceable (400), and a value is required (400)', async () => {
    await create('dup', 'a');
    await expect(create('dup', 'b')).rejects.toMatchObject({
      status: 409,
      code: 'SECRET_NAME_TAKEN',
      message: expect.stringContaining('"dup"'),
    });
    await expect(create('dup', 'b', { ownerId: 'usr_bob' })).resolves.toMatchObject({
      name: 'dup',
    });
    await expect(create('has space', 'x')).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'secret.name' })],
    });
    await expect(
      server.bus.request(VaultRpc.createSecret, {
        ownerId: OWNER,
        secret: { name: 'novalue' } as never,
      }),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'secret.value' })],
    });
    // A validation error never echoes the value.
    const err = await create('bad name!', 'super-secret-echo').catch((e: RunplaneError) => e);
    expect(JSON.stringify((err as RunplaneError).toBody())).not.toContain('super-secret-echo');
    await expect(create('ghost', 'x', { ownerId: 'usr_nobody' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('resolves {{ RUNPOD_SECRET_<name> }} in an env for its owner only; unknown names fail naming secret and variable', async () => {
    await create('token', 'T0K$&N');
    await create('token', 'bobs-token', { ownerId: 'usr_bob' });
    const env = { A: '{{ RUNPOD_SECRET_token }}', B: 'Bearer {{RUNPOD_SECRET_token}}', C: 'plain' };
    expect(await server.bus.request(VaultRpc.resolveSecrets, { ownerId: OWNER, env })).toEqual({
      env: { A: 'T0K$&N', B: 'Bearer T0K$&N', C: 'plain' },
    });
    expect(
      (await server.bus.request(VaultRpc.resolveSecrets, { ownerId: 'usr_bob', env })).env.A,
    ).toBe('bobs-token');
    expect(
      await server.bus.request(VaultRpc.resolveSecrets, { ownerId: OWNER, env: { C: 'plain' } }),
    ).toEqual({ env: { C: 'plain' } });
    await expect(
      server.bus.request(VaultRpc.resolveSecrets, {
        ownerId: OWNER,
        env: { ...env, D: '{{ RUNPOD_SECRET_nope }}' },
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'SECRET_NOT_FOUND',
      message: expect.stringMatching(/"nope" \(in D\)/),
    });
  });

  it("deletes the owner's secret only; then it is 404 and no longer resolves", async () => {
    const s = await create('gone', 'v');
    await expect(
      server.bus.request(VaultRpc.deleteSecret, { ownerId: 'usr_bob', secretId: s.id }),
    ).rejects.toMatchObject({ status: 404 });
    expect(
      await server.bus.request(VaultRpc.deleteSecret, { ownerId: OWNER, secretId: s.id }),
    ).toEqual({ ok: true });
    await expect(
      server.bus.request(VaultRpc.deleteSecret, { ownerId: OWNER, secretId: s.id }),
    ).rejects.toMatchObject({ status: 404, code: 'SECRET_NOT_FOUND' });
    await expect(
      server.bus.request(VaultRpc.resolveSecrets, {
        ownerId: OWNER,
        env: { X: '{{ RUNPOD_SECRET_gone }}' },
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a value holding a NUL character at creation (400 naming the rule, not the value); nothing stored', async () => {
    const value = `nul-${randomBytes(6).toString('hex')}\u0000tail`;
    const err = await create('with_nul', value).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunplaneError);
    expect((err as RunplaneError).status).toBe(400);
    expect((err as RunplaneError).message).toMatch(/value must not contain a NUL character/);
    expect(JSON.stringify(err)).not.toContain(value.slice(0, 10));
    const listed = await server.bus.request(VaultRpc.listSecrets, { ownerId: OWNER });
    expect(listed.map((s) => s.name)).not.toContain('with_nul');
  });
});
