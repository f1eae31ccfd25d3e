import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import { UserRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';

/** `/v1/users` and `/v1/apikeys` through HTTP, as an operator uses them. */
describe('secrets-vault: users and API keys over REST', () => {
  let server: TestServer;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    server = await startTestServer([secretsVaultService]);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  async function newUserKey(scope: 'admin' | 'readwrite' | 'readonly') {
    const user = await server.call('POST', '/v1/users', { name: `user-${scope}` });
    expect(user.status).toBe(200);
    const created = await server.call('POST', '/v1/apikeys', {
      name: `${scope} key`,
      userId: user.body.id,
      scope,
    });
    expect(created.status).toBe(200);
    return {
      userId: user.body.id as string,
      keyId: created.body.id as string,
      key: created.body.key as string,
    };
  }

  it('an admin creates a user and lists users', async () => {
    const created = await server.call('POST', '/v1/users', { name: 'alice' });
    expect(created).toMatchObject({
      status: 200,
      body: { id: expect.stringMatching(/^usr_/), name: 'alice', createdAt: expect.any(String) },
    });
    const listed = await server.call('GET', '/v1/users');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(expect.arrayContaining([created.body]));
  });

  it('creates a key shown once, stored only as its hash, never listed with its value', async () => {
    const { userId, keyId, key } = await newUserKey('readwrite');
    expect(key).toMatch(/^rpk_[A-Za-z0-9_-]{43}$/);
    const row = await server.app
      .get(PrismaClient, { strict: false })
      .apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(row.keyHash).toBe(hashApiKey(key));
    expect(JSON.stringify(row)).not.toContain(key);

    const all = await server.call('GET', '/v1/apikeys');
    expect(all.status).toBe(200);
    expect(all.body).toEqual(
      expect.arrayContaining([
        {
          id: keyId,
          name: 'readwrite key',
          userId,
          scope: 'readwrite',
          endpointId: null,
          createdAt: expect.any(String),
        },
      ]),
    );
    expect(JSON.stringify(all.body)).not.toContain(key);
    expect(JSON.stringify(all.body)).not.toContain(row.keyHash);

    // The user sees only their own keys.
    const own = await server.call('GET', '/v1/apikeys', undefined, as(key));
    expect(own.status).toBe(200);
    expect(own.body.map((k: { userId: string }) => k.userId)).toEqual([userId]);
  });

  it('a non-admin key creates keys only for its own user and no wider than its own scope', async () => {
    const { userId, key } = await newUserKey('readwrite');
    const wider = await server.call(
      'POST',
      '/v1/apikeys',
      { name: 'escalate', scope: 'admin' },
      as(key),
    );
    expect(wider).toMatchObject({
      status: 401,
      body: {
        status: 401,
        error: expect.stringMatching(
          /scope readwrite cannot create a key with the wider scope admin/,
        ),
      },
    });
    const other = await server.call(
      'POST',
      '/v1/apikeys',
      { name: 'foreign', scope: 'readonly', userId: 'usr_admin' },
      as(key),
    );
    expect(other.status).toBe(404);
    const narrower = await server.call(
      'POST',
      '/v1/apikeys',
      { name: 'ro', scope: 'readonly' },
      as(key),
    );
    expect(narrower).toMatchObject({
      status: 200,
      body: { userId, scope: 'readonly', key: expect.any(String) },
    });
    expect((await server.call('GET', '/v1/users', undefined, as(key))).status).toBe(401); // admin only
  });

  it('a readonly key reads but cannot create keys or users', async () => {
    const { key } = await newUserKey('readonly');
    expect((await server.call('GET', '/v1/apikeys', undefined, as(key))).status).toBe(200);
    expect(
      (await server.call('POST', '/v1/apikeys', { name: 'x', scope: 'readonly' }, as(key))).status,
    ).toBe(401);
    expect((await server.call('POST', '/v1/users', { name: 'x' }, as(key))).status).toBe(401);
  });

  it('GET /v1/apikeys/current names the calling key and its scope (never its value)', async () => {
    const { userId, keyId, key } = await newUserKey('readonly');
    const current = await server.call('GET', '/v1/apikeys/current', undefined, as(key));
    expect(current).toMatchObject({
      status: 200,
      body: { id: keyId, userId, scope: 'readonly', name: 'readonly key', endpointId: null },
    });
    expect(JSON.stringify(current.body)).not.toContain(key);
    const admin = await server.call('GET', '/v1/apikeys/current');
    expect(admin.body).toMatchObject({ scope: 'admin' });
    expect(
      (await server.call('GET', '/v1/apikeys/current', undefined, as('rpk_nope'))).status,
    ).toBe(401);
  });

  it('revoking a key (204) stops it at once; unknown keys 404; the caller and bootstrap keys are refused', async () => {
    const { keyId, key } = await newUserKey('readwrite');
    expect((await server.call('GET', '/v1/apikeys', undefined, as(key))).status).toBe(200);
    const revoked = await server.call('DELETE', `/v1/apikeys/${keyId}`);
    expect(revoked.status).toBe(204);
    expect((await server.call('GET', '/v1/apikeys', undefined, as(key))).status).toBe(401);
    expect((await server.call('DELETE', `/v1/apikeys/${keyId}`)).status).toBe(404);
    expect(
      (await server.call('GET', '/v1/apikeys')).body.some((k: { id: string }) => k.id === keyId),
    ).toBe(false);

    const self = await newUserKey('readwrite');
    expect(
      (await server.call('DELETE', `/v1/apikeys/${self.keyId}`, undefined, as(self.key))).status,
    ).toBe(409);
    expect((await server.call('DELETE', '/v1/apikeys/key_bootstrap')).status).toBe(409);
    // Another user's key is not found for a non-admin.
    const mallory = await newUserKey('readwrite');
    expect(
      (await server.call('DELETE', `/v1/apikeys/${self.keyId}`, undefined, as(mallory.key))).status,
    ).toBe(404);
  });

  it('a readwrite key cannot revoke an admin key of its own user (401, the key stays); it revokes its readwrite and readonly keys', async () => {
    const { userId, key } = await newUserKey('readwrite');
    const keyOf = async (scope: 'admin' | 'readwrite' | 'readonly') => {
      const created = await server.call('POST', '/v1/apikeys', { name: scope, userId, scope });
      expect(created.status).toBe(200);
      return created.body as { id: string; key: string };
    };
    const admin = await keyOf('admin');
    const refused = await server.call('DELETE', `/v1/apikeys/${admin.id}`, undefined, as(key));
    expect(refused).toMatchObject({
      status: 401,
      body: {
        status: 401,
        error: expect.stringMatching(
          /scope readwrite cannot revoke a key with the wider scope admin/,
        ),
      },
    });
    // The admin key still works and is still listed.
    expect((await server.call('GET', '/v1/users', undefined, as(admin.key))).status).toBe(200);
    expect(
      (await server.call('GET', '/v1/apikeys', undefined, as(key))).body.some(
        (k: { id: string }) => k.id === admin.id,
      ),
    ).toBe(true);

    for (const scope of ['readwrite', 'readonly'] as const) {
      const narrower = await keyOf(scope);
      expect(
        (await server.call('DELETE', `/v1/apikeys/${narrower.id}`, undefined, as(key))).status,
      ).toBe(204);
      expect((await server.call('GET', '/v1/apikeys', undefined, as(narrower.key))).status).toBe(
        401,
      );
    }
    // An admin key of the same user may revoke it.
    const otherAdmin = await keyOf('admin');
    expect(
      (await server.call('DELETE', `/v1/apikeys/${admin.id}`, undefined, as(otherAdmin.key)))
        .status,
    ).toBe(204);
  });

  it("a user's own settings over the bus: the SSH public keys are kept as sent, whether they hold an admin key; unknown users 404", async () => {
    const { userId } = await newUserKey('readwrite');
    expect(await server.bus.request(UserRpc.get, { userId })).toEqual({
      id: userId,
      name: 'user-readwrite',
      pubKey: '',
      createdAt: expect.any(String),
      isAdmin: false,
    });
    // A user holding a live admin key is one the operator trusts (e.g. to run commands locally).
    const admin = await newUserKey('admin');
    expect((await server.bus.request(UserRpc.get, { userId: admin.userId })).isAdmin).toBe(true);
    const keys = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA one@host\n\nssh-rsa AAAAB3Nza two@host';
    const updated = await server.bus.request(UserRpc.updateSettings, { userId, pubKey: keys });
    expect(updated.pubKey).toBe(keys);
    expect((await server.bus.request(UserRpc.get, { userId })).pubKey).toBe(keys);
    await expect(server.bus.request(UserRpc.get, { userId: 'usr_nobody' })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      server.bus.request(UserRpc.updateSettings, { userId, pubKey: 'x'.repeat(65_537) }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('rejects bad input with 400 and the offending field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ scope: 'readonly' }, 'name'],
      [{ name: 'k', scope: 'superuser' }, 'scope'],
      [{ name: 'k', scope: 'worker' }, 'endpointId'],
      [{ name: 7, scope: 'readonly' }, 'name'],
    ];
    for (const [body, path] of cases) {
      const res = await server.call('POST', '/v1/apikeys', body);
      expect({
        body,
        status: res.status,
        paths: res.body.details?.map((d: { path: string }) => d.path),
      }).toEqual({ body, status: 400, paths: expect.arrayContaining([path]) });
    }
    const endpointOnReadonly = await server.call('POST', '/v1/apikeys', {
      name: 'k',
      scope: 'readonly',
      endpointId: 'ep',
    });
    expect(endpointOnReadonly.status).toBe(400);
    expect((await server.call('POST', '/v1/users', {})).status).toBe(400);
  });
});
