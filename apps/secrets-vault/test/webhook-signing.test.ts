import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WebhookVaultRpc } from '@runplane/contracts';
import { startTestServer, type TestServer } from '@runplane/platform';
import { randomBytes } from 'node:crypto';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { secretsVaultService } from '../src/index.js';

describe('secrets-vault: webhook signing secrets', () => {
  let server: TestServer;
  let db: PrismaClient;
  beforeAll(async () => {
    server = await startTestServer([secretsVaultService], {
      RUNPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
    });
    db = server.app.get(PrismaClient, { strict: false });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const ask = (userId: string) => server.bus.request(WebhookVaultRpc.signingSecret, { userId });

  it('one secret per account, made on first use, the same on every later call (also when asked concurrently)', async () => {
    const [a, b] = await Promise.all([ask('usr_sig_a'), ask('usr_sig_a')]);
    expect(a.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(b).toEqual(a);
    expect(await ask('usr_sig_a')).toEqual(a);
    expect((await ask('usr_sig_b')).secret).not.toBe(a.secret);
  });

  it('is stored sealed: no row holds the secret in plain text', async () => {
    const { secret } = await ask('usr_sig_c');
    const row = await db.webhookSigningSecret.findUniqueOrThrow({ where: { userId: 'usr_sig_c' } });
    const raw = secret.slice('whsec_'.length);
    for (const bytes of [row.ciphertext, row.wrappedKey]) {
      expect(Buffer.from(bytes).toString('latin1')).not.toContain(raw);
      expect(Buffer.from(bytes).includes(Buffer.from(raw, 'base64'))).toBe(false);
    }
    // A sealed value moved to another account does not open there.
    await db.webhookSigningSecret.create({ data: { ...row, userId: 'usr_sig_d' } });
    await expect(ask('usr_sig_d')).rejects.toBeDefined();
  });

  it('rejects a request without a user (400)', async () => {
    await expect(
      server.bus.request(WebhookVaultRpc.signingSecret, { userId: '' }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
