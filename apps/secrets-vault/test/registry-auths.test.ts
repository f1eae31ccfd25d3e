import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunplaneError, VaultRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { BOOTSTRAP_USER_ID } from '../src/apikeys/apikeys.repository.js';
import { MasterKeyring } from '../src/crypto/master-keyring.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';
import { registryAuthAad } from '../src/registry-auths/registry-auths.repository.js';

const OWNER = BOOTSTRAP_USER_ID;

describe('secrets-vault: container registry auths', () => {
  let server: TestServer;
  let db: PrismaClient;
  beforeAll(async () => {
    server = await startTestServer([secretsVaultService], {
      RUNPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
    });
    db = server.app.get(PrismaClient, { strict: false });
    await db.user.create({ data: { id: 'usr_eve', name: 'eve' } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const rejection = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunplaneError);
    return err as RunplaneError;
  };

  it('keeps the credentials sealed: the row holds ciphertext bound to it; an update reseals', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const auth = await server.bus.request(VaultRpc.createRegistryAuth, {
      ownerId: OWNER,
      auth: { name: 'ghcr', username: 'robot', password },
    });
    expect(auth).toEqual({ id: expect.stringMatching(/^cra_/), name: 'ghcr' });
    const row = await db.containerRegistryAuth.findUniqueOrThrow({ where: { id: auth.id } });
    const stored = JSON.stringify(row, (_k, v) =>
      v && v.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v,
    );
    expect(stored).not.toContain(password);
    expect(stored).not.toContain('robot');
    const keyring = server.app.get(MasterKeyring, { strict: false });
    expect(JSON.parse(keyring.open(row, registryAuthAad(row)))).toEqual({
      username: 'robot',
      password,
    });
    // Moved to another owner, the ciphertext no longer opens.
    expect(() => keyring.open(row, registryAuthAad({ ...row, ownerId: 'usr_eve' }))).toThrow();

    const updated = await server.bus.request(VaultRpc.updateRegistryAuth, {
      ownerId: OWNER,
      registryAuthId: auth.id,
      credentials: { username: 'robot2', password: 'new' },
    });
    expect(updated).toEqual(auth);
    const resealed = await db.containerRegistryAuth.findUniqueOrThrow({ where: { id: auth.id } });
    expect(Buffer.compare(resealed.ciphertext, row.ciphertext)).not.toBe(0);
    expect(JSON.parse(keyring.open(resealed, registryAuthAad(resealed)))).toEqual({
      username: 'robot2',
      password: 'new',
    });
  });

  it('scopes auths to their owner and refuses bad input without storing anything', async () => {
    const auth = await server.bus.request(VaultRpc.createRegistryAuth, {
      ownerId: OWNER,
      auth: { name: 'quay', username: 'u', password: 'p' },
    });
    const foreign = await rejection(
      server.bus.request(VaultRpc.deleteRegistryAuth, {
        ownerId: 'usr_eve',
        registryAuthId: auth.id,
      }),
    );
    expect(foreign.status).toBe(404);
    expect(await server.bus.request(VaultRpc.listRegistryAuths, { ownerId: 'usr_eve' })).toEqual(
      [],
    );
    const taken = await rejection(
      server.bus.request(VaultRpc.createRegistryAuth, {
        ownerId: OWNER,
        auth: { name: 'quay', username: 'u', password: 'p' },
      }),
    );
    expect(taken).toMatchObject({ status: 409, code: 'REGISTRY_AUTH_NAME_TAKEN' });
    const nul = await rejection(
      server.bus.request(VaultRpc.createRegistryAuth, {
        ownerId: OWNER,
        auth: { name: 'nul', username: 'u', password: 'a\u0000b' },
      }),
    );
    expect(nul.status).toBe(400);
    expect(nul.message).toMatch(/password must not contain a NUL/);
    expect(
      (await server.bus.request(VaultRpc.listRegistryAuths, { ownerId: OWNER })).map((a) => a.name),
    ).not.toContain('nul');
    expect(
      await server.bus.request(VaultRpc.deleteRegistryAuth, {
        ownerId: OWNER,
        registryAuthId: auth.id,
      }),
    ).toEqual({ ok: true });
  });

  it('resolve opens the credentials for their owner only (the docker provider pulls with them)', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const auth = await server.bus.request(VaultRpc.createRegistryAuth, {
      ownerId: OWNER,
      auth: { name: 'private-registry', username: 'puller', password },
    });
    expect(
      await server.bus.request(VaultRpc.resolveRegistryAuth, {
        ownerId: OWNER,
        registryAuthId: auth.id,
      }),
    ).toEqual({ username: 'puller', password });
    const foreign = await rejection(
      server.bus.request(VaultRpc.resolveRegistryAuth, {
        ownerId: 'usr_eve',
        registryAuthId: auth.id,
      }),
    );
    expect(foreign).toMatchObject({ status: 404, code: 'REGISTRY_AUTH_NOT_FOUND' });
    expect(foreign.message).not.toContain(password);
    // Every other answer about it stays {id, name}.
    expect(await server.bus.request(VaultRpc.listRegistryAuths, { ownerId: OWNER })).toContainEqual(
      { id: auth.id, name: 'private-registry' },
    );
  });
});
