import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { VaultRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BOOTSTRAP_USER_ID } from '../src/apikeys/apikeys.repository.js';
import { masterKeyId } from '../src/crypto/master-keyring.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';

describe('secrets-vault: master key rotation across restarts', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'runplane-vault-rotation-'));
  let server: TestServer | undefined;
  afterEach(async () => { await server?.stop(); server = undefined; });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('secrets sealed with the old key resolve after a rotation and are re-wrapped with the new key at start', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    server = await startTestServer([secretsVaultService], { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_MASTER_KEY: oldKey.toString('base64') });
    const s = await server.bus.request(VaultRpc.createSecret, { ownerId: BOOTSTRAP_USER_ID, secret: { name: 'rotated', value: 'still-readable' } });
    await server.stop();

    server = await startTestServer([secretsVaultService], {
      RUNPLANE_DATA_DIR: dataDir, RUNPLANE_MASTER_KEY: newKey.toString('hex'), RUNPLANE_MASTER_KEY_PREVIOUS: oldKey.toString('base64'),
    });
    const row = await server.app.get(PrismaClient, { strict: false }).secret.findUniqueOrThrow({ where: { id: s.id } });
    expect(row.keyId).toBe(masterKeyId(newKey));
    await server.stop();

    // The old key is no longer needed.
    server = await startTestServer([secretsVaultService], { RUNPLANE_DATA_DIR: dataDir, RUNPLANE_MASTER_KEY: newKey.toString('base64') });
    expect(await server.bus.request(VaultRpc.resolveSecrets, { ownerId: BOOTSTRAP_USER_ID, env: { V: '{{ RUNPOD_SECRET_rotated }}' } }))
      .toEqual({ env: { V: 'still-readable' } });
  }, 90_000);
});
