import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { VaultRpc, WebhookVaultRpc } from '@runplane/contracts';
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
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('secrets and webhook signing secrets sealed with the old key open after a rotation and are re-wrapped with the new key at start', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    server = await startTestServer([secretsVaultService], {
      RUNPLANE_DATA_DIR: dataDir,
      RUNPLANE_MASTER_KEY: oldKey.toString('base64'),
    });
    const s = await server.bus.request(VaultRpc.createSecret, {
      ownerId: BOOTSTRAP_USER_ID,
      secret: { name: 'rotated', value: 'still-readable' },
    });
    const { secret: signing } = await server.bus.request(WebhookVaultRpc.signingSecret, {
      userId: BOOTSTRAP_USER_ID,
    });
    await server.stop();

    server = await startTestServer([secretsVaultService], {
      RUNPLANE_DATA_DIR: dataDir,
      RUNPLANE_MASTER_KEY: newKey.toString('hex'),
      RUNPLANE_MASTER_KEY_PREVIOUS: oldKey.toString('base64'),
    });
    const db = server.app.get(PrismaClient, { strict: false });
    expect((await db.secret.findUniqueOrThrow({ where: { id: s.id } })).keyId).toBe(
      masterKeyId(newKey),
    );
    // Webhook signing secrets are sealed values too, re-wrapped the same way.
    expect(
      (await db.webhookSigningSecret.findUniqueOrThrow({ where: { userId: BOOTSTRAP_USER_ID } }))
        .keyId,
    ).toBe(masterKeyId(newKey));
    await server.stop();

    // The old key is no longer needed.
    server = await startTestServer([secretsVaultService], {
      RUNPLANE_DATA_DIR: dataDir,
      RUNPLANE_MASTER_KEY: newKey.toString('base64'),
    });
    expect(
      await server.bus.request(VaultRpc.resolveSecrets, {
        ownerId: BOOTSTRAP_USER_ID,
        env: { V: '{{ RUNPOD_SECRET_rotated }}' },
      }),
    ).toEqual({ env: { V: 'still-readable' } });
    expect(
      await server.bus.request(WebhookVaultRpc.signingSecret, { userId: BOOTSTRAP_USER_ID }),
    ).toEqual({ secret: signing });
  }, 90_000);
});
