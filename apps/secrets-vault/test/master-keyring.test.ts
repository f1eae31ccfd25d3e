import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MasterKeyError, MasterKeyring, masterKeyId } from '../src/crypto/master-keyring.js';

const b64 = () => randomBytes(32).toString('base64');
const hex = () => randomBytes(32).toString('hex');
const tmp = () => mkdtempSync(path.join(tmpdir(), 'runplane-vault-'));

describe('MasterKeyring (envelope encryption, AES-256-GCM)', () => {
  it('seals a value with its own data key: no plain text inside, fresh ciphertext each time, opens only with the same row binding', () => {
    const ring = MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: b64() }, 'memory');
    const value = 'sk-live-0123456789';
    const a = ring.seal(value, 'secret:1:u');
    const b = ring.seal(value, 'secret:1:u');
    expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false);
    expect(Buffer.from(a.wrappedKey).equals(Buffer.from(b.wrappedKey))).toBe(false);
    for (const bytes of [a.ciphertext, a.wrappedKey]) {
      expect(Buffer.from(bytes).includes(Buffer.from(value))).toBe(false);
      expect(Buffer.from(bytes).toString('latin1')).not.toContain(value);
    }
    expect(a.keyId).toBe(ring.currentKeyId);
    expect(ring.open(a, 'secret:1:u')).toBe(value);
    expect(() => ring.open(a, 'secret:2:u')).toThrow(); // moved to another row: GCM authentication fails
    const tampered = { ...a, ciphertext: new Uint8Array(a.ciphertext) };
    tampered.ciphertext[tampered.ciphertext.length - 1] ^= 1;
    expect(() => ring.open(tampered, 'secret:1:u')).toThrow();
  });

  it('reads the key as base64 or hex, from the variable or a mounted file; rejects anything else clearly', () => {
    const key = hex();
    const fromHex = MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: key }, 'memory');
    expect(fromHex.currentKeyId).toBe(masterKeyId(Buffer.from(key, 'hex')));
    const file = path.join(tmp(), 'key');
    writeFileSync(file, `${Buffer.from(key, 'hex').toString('base64')}\n`);
    const fromFile = MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY_FILE: file }, 'memory');
    expect(fromFile.currentKeyId).toBe(fromHex.currentKeyId);
    expect(fromFile.source).toBe('RUNPLANE_MASTER_KEY_FILE');

    expect(() =>
      MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: 'too-short' }, 'memory'),
    ).toThrow(/RUNPLANE_MASTER_KEY must be 32 random bytes/);
    expect(() =>
      MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY_FILE: '/nonexistent/key' }, 'memory'),
    ).toThrow(/cannot read \/nonexistent\/key: ENOENT/);
    expect(() =>
      MasterKeyring.fromEnvironment(
        { RUNPLANE_MASTER_KEY: key, RUNPLANE_MASTER_KEY_FILE: file },
        'memory',
      ),
    ).toThrow(/not both/);
    expect(() => MasterKeyring.fromEnvironment({ NODE_ENV: 'production' }, '/tmp/x')).toThrow(
      MasterKeyError,
    );
  });

  it('standalone: creates the data dir key once with mode 0600 and keeps using it', () => {
    const dir = path.join(tmp(), 'data');
    const first = MasterKeyring.fromEnvironment({}, dir);
    const file = path.join(dir, 'master.key');
    expect(first.source).toBe('data-dir');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = MasterKeyring.fromEnvironment({}, dir);
    expect(again.currentKeyId).toBe(first.currentKeyId);
    expect(again.open(first.seal('v', 'x'), 'x')).toBe('v');
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('rotates: a value sealed with an older key opens with it listed in RUNPLANE_MASTER_KEY_PREVIOUS, and re-wraps to the new key', () => {
    const oldKey = b64();
    const old = MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: oldKey }, 'memory');
    const sealed = old.seal('rotate me', 'aad');
    const rotated = MasterKeyring.fromEnvironment(
      { RUNPLANE_MASTER_KEY: b64(), RUNPLANE_MASTER_KEY_PREVIOUS: ` ${oldKey} ` },
      'memory',
    );
    expect(rotated.currentKeyId).not.toBe(old.currentKeyId);
    expect(rotated.open(sealed, 'aad')).toBe('rotate me');
    const rewrapped = { ...sealed, ...rotated.rewrap(sealed, 'aad') };
    expect(rewrapped.keyId).toBe(rotated.currentKeyId);
    expect(
      MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: b64() }, 'memory').knows(sealed.keyId),
    ).toBe(false);
    expect(() =>
      MasterKeyring.fromEnvironment({ RUNPLANE_MASTER_KEY: b64() }, 'memory').open(sealed, 'aad'),
    ).toThrow(/not configured/);
  });
});
