import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '@runplane/auth';
import { VaultRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { BOOTSTRAP_USER_ID } from '../src/apikeys/apikeys.repository.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';

describe('secrets-vault: worker keys', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer([secretsVaultService]);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('mints a worker key for one endpoint that verifies to a worker principal; only its hash is stored', async () => {
    const minted = await server.bus.request(VaultRpc.mintWorkerKey, {
      userId: BOOTSTRAP_USER_ID,
      endpointId: 'ep-1',
      workerId: 'w-1',
    });
    expect(minted).toEqual({
      keyId: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^rpk_[A-Za-z0-9_-]{43}$/),
    });
    const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
      keyHash: hashApiKey(minted.key),
    });
    expect(principal).toEqual({
      userId: BOOTSTRAP_USER_ID,
      keyId: minted.keyId,
      scope: 'worker',
      endpointId: 'ep-1',
      workerId: 'w-1',
    });

    const row = await server.app
      .get(PrismaClient, { strict: false })
      .apiKey.findUniqueOrThrow({ where: { id: minted.keyId } });
    expect(row.keyHash).toBe(hashApiKey(minted.key));
    expect(JSON.stringify(row)).not.toContain(minted.key);

    const second = await server.bus.request(VaultRpc.mintWorkerKey, {
      userId: BOOTSTRAP_USER_ID,
      endpointId: 'ep-1',
      workerId: 'w-2',
    });
    expect(second.key).not.toBe(minted.key);
    expect(second.keyId).not.toBe(minted.keyId);
  });

  it('refuses an unknown user (404) and an incomplete request (400)', async () => {
    await expect(
      server.bus.request(VaultRpc.mintWorkerKey, {
        userId: 'usr_nobody',
        endpointId: 'ep-1',
        workerId: 'w-1',
      }),
    ).rejects.toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    await expect(
      server.bus.request(VaultRpc.mintWorkerKey, {
        userId: BOOTSTRAP_USER_ID,
        workerId: 'w-1',
      } as never),
    ).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'endpointId' })],
    });
  });

  it('the admin key still verifies as admin, and unknown hashes verify to no one', async () => {
    const { principal } = await server.bus.request(VaultRpc.verifyApiKey, {
      keyHash: hashApiKey(server.apiKey),
    });
    expect(principal).toMatchObject({ userId: BOOTSTRAP_USER_ID, scope: 'admin' });
    await expect(
      server.bus.request(VaultRpc.verifyApiKey, { keyHash: hashApiKey('rpk_unknown') }),
    ).resolves.toEqual({ principal: null });
  });

  const mint = (workerId: string) =>
    server.bus.request(VaultRpc.mintWorkerKey, {
      userId: BOOTSTRAP_USER_ID,
      endpointId: 'ep-r',
      workerId,
    });
  const verifies = async (key: string) =>
    (await server.bus.request(VaultRpc.verifyApiKey, { keyHash: hashApiKey(key) })).principal !==
    null;
  const keysOf = (workerIds: string[]) =>
    server.app
      .get(PrismaClient, { strict: false })
      .apiKey.count({ where: { workerId: { in: workerIds } } });

  it('a retired worker key stops verifying and leaves no row behind', async () => {
    const a = await mint('w-retire-a');
    const b = await mint('w-retire-b');
    expect(
      await server.bus.request(VaultRpc.retireWorkerKeys, { workerIds: ['w-retire-a'] }),
    ).toEqual({ retired: 1 });
    expect(await verifies(a.key)).toBe(false);
    expect(await verifies(b.key)).toBe(true);
    expect(await keysOf(['w-retire-a'])).toBe(0);
    // Again: nothing left to retire.
    expect(
      await server.bus.request(VaultRpc.retireWorkerKeys, { workerIds: ['w-retire-a'] }),
    ).toEqual({ retired: 0 });
  });

  it('reconciliation retires keys of workers that are not live, but not keys minted after the list', async () => {
    const live = await mint('w-keep-live');
    const gone = await mint('w-keep-gone');
    const cutoff = new Date(Date.now() + 60_000).toISOString();
    const userKey = server.apiKey; // keys without a worker are never touched
    const { retired } = await server.bus.request(VaultRpc.keepWorkerKeys, {
      liveWorkerIds: ['w-keep-live', 'w-1', 'w-2', 'w-retire-b'],
      mintedBefore: cutoff,
    });
    expect(retired).toBeGreaterThanOrEqual(1);
    expect(await verifies(gone.key)).toBe(false);
    expect(await verifies(live.key)).toBe(true);
    expect(await verifies(userKey)).toBe(true);
    const fresh = await mint('w-keep-fresh');
    await server.bus.request(VaultRpc.keepWorkerKeys, {
      liveWorkerIds: ['w-keep-live'],
      mintedBefore: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(await verifies(fresh.key)).toBe(true);
  });
});
