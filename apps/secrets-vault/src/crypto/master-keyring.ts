import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const KEY_BYTES = 32; // AES-256
const IV_BYTES = 12; // GCM's recommended nonce size
const TAG_BYTES = 16;

/** What a sealed value looks like at rest: nothing in it is the plain value or key. */
export interface SealedValue {
  /** iv || tag || AES-256-GCM ciphertext of the value under its data key. */
  ciphertext: Uint8Array<ArrayBuffer>;
  /** iv || tag || the data key sealed with the master key `keyId`. */
  wrappedKey: Uint8Array<ArrayBuffer>;
  keyId: string;
}

export class MasterKeyError extends Error {
  override readonly name = 'MasterKeyError';
}

interface MasterKey {
  id: string;
  key: Buffer;
}

/** Where the key came from, for one informative log line (never the key). */
export type MasterKeySource =
  'RUNPLANE_MASTER_KEY' | 'RUNPLANE_MASTER_KEY_FILE' | 'data-dir' | 'ephemeral';

/**
 * The vault's master keys and envelope encryption (AES-256-GCM throughout): every value gets its
 * own random data key; the data key is sealed with the current master key and stored next to the
 * ciphertext with that key's id, so the master key can rotate by re-wrapping data keys only.
 * Additional authenticated data binds a ciphertext to its row, so rows cannot be swapped.
 */
export class MasterKeyring {
  private readonly byId: ReadonlyMap<string, MasterKey>;

  constructor(
    private readonly current: MasterKey,
    previous: MasterKey[] = [],
    readonly source: MasterKeySource = 'ephemeral',
    readonly location?: string,
  ) {
    this.byId = new Map([...previous, current].map((k) => [k.id, k]));
  }

  /** Id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /** True when a value sealed with `keyId` can be opened here. */
  knows(keyId: string): boolean {
    return this.byId.has(keyId);
  }

  seal(plain: string, aad: string): SealedValue {
    const dataKey = randomBytes(KEY_BYTES);
    try {
      return {
        ciphertext: encrypt(dataKey, Buffer.from(plain, 'utf8'), aad),
        wrappedKey: encrypt(this.current.key, dataKey, wrapAad(this.current.id, aad)),
        keyId: this.current.id,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  open(sealed: SealedValue, aad: string): string {
    const dataKey = this.unwrap(sealed, aad);
    try {
      return decrypt(dataKey, sealed.ciphertext, aad).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  }

  /** The same value's data key sealed with the current master key (the ciphertext is unchanged). */
  rewrap(sealed: SealedValue, aad: string): Pick<SealedValue, 'wrappedKey' | 'keyId'> {
    const dataKey = this.unwrap(sealed, aad);
    try {
      return {
        wrappedKey: encrypt(this.current.key, dataKey, wrapAad(this.current.id, aad)),
        keyId: this.current.id,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  private unwrap(sealed: SealedValue, aad: string): Buffer {
    const master = this.byId.get(sealed.keyId);
    if (!master) {
      throw new MasterKeyError(
        `a secret is sealed with master key ${sealed.keyId}, which is not configured ` +
          '(set it in RUNPLANE_MASTER_KEY_PREVIOUS after a rotation)',
      );
    }
    return decrypt(master.key, sealed.wrappedKey, wrapAad(sealed.keyId, aad));
  }

  /**
   * The keyring from the environment (docs/configuration.md): `RUNPLANE_MASTER_KEY` (32 bytes as
   * base64 or 64 hex digits) or `RUNPLANE_MASTER_KEY_FILE` (a mounted file holding that), plus
   * `RUNPLANE_MASTER_KEY_PREVIOUS` (comma-separated older keys, read-only, for rotation). Without
   * one, outside production, the key lives in the data dir (`master.key`, created with mode 0600),
   * or only in memory for `RUNPLANE_DATA_DIR=memory`.
   */
  static fromEnvironment(env: NodeJS.ProcessEnv, dataDir: string): MasterKeyring {
    const previous = (env.RUNPLANE_MASTER_KEY_PREVIOUS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((text, i) => masterKey(text, `RUNPLANE_MASTER_KEY_PREVIOUS (item ${i + 1})`));
    if (env.RUNPLANE_MASTER_KEY?.trim()) {
      if (env.RUNPLANE_MASTER_KEY_FILE?.trim())
        throw new MasterKeyError('set RUNPLANE_MASTER_KEY or RUNPLANE_MASTER_KEY_FILE, not both');
      return new MasterKeyring(
        masterKey(env.RUNPLANE_MASTER_KEY, 'RUNPLANE_MASTER_KEY'),
        previous,
        'RUNPLANE_MASTER_KEY',
      );
    }
    const file = env.RUNPLANE_MASTER_KEY_FILE?.trim();
    if (file) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        throw new MasterKeyError(
          `RUNPLANE_MASTER_KEY_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        );
      }
      return new MasterKeyring(
        masterKey(text, `RUNPLANE_MASTER_KEY_FILE (${file})`),
        previous,
        'RUNPLANE_MASTER_KEY_FILE',
        file,
      );
    }
    if (env.NODE_ENV === 'production') {
      throw new MasterKeyError(
        'secrets-vault needs a master key in production: set RUNPLANE_MASTER_KEY or RUNPLANE_MASTER_KEY_FILE ' +
          '(32 random bytes as base64 or hex, e.g. `openssl rand -base64 32`); see docs/configuration.md',
      );
    }
    if (dataDir === 'memory') return new MasterKeyring(newMasterKey(), previous, 'ephemeral');
    const keyFile = path.resolve(dataDir, 'master.key');
    return new MasterKeyring(
      masterKey(readOrCreateKeyFile(keyFile), keyFile),
      previous,
      'data-dir',
      keyFile,
    );
  }
}

/** Short public fingerprint of a master key: stored with each secret, safe to log. */
export function masterKeyId(key: Buffer): string {
  return `mk_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** 32 bytes from base64 (standard or url) or hex text. */
export function parseMasterKey(text: string, what: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? Buffer.from(t, 'base64')
      : null;
  if (!key || key.length !== KEY_BYTES) {
    throw new MasterKeyError(
      `${what} must be 32 random bytes as base64 (44 characters) or hex (64 characters), e.g. \`openssl rand -base64 32\``,
    );
  }
  return key;
}

function masterKey(text: string, what: string): MasterKey {
  const key = parseMasterKey(text, what);
  return { id: masterKeyId(key), key };
}

function newMasterKey(): MasterKey {
  const key = randomBytes(KEY_BYTES);
  return { id: masterKeyId(key), key };
}

/** The standalone key file: created once (0600, never overwritten), tightened if it is readable by others. */
function readOrCreateKeyFile(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new MasterKeyError(
        `cannot create the master key file ${file}: ${(err as Error).message}`,
      );
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return readFileSync(file, 'utf8');
}

function wrapAad(keyId: string, aad: string): string {
  return `${keyId}\u0000${aad}`;
}

function encrypt(key: Buffer, plain: Buffer, aad: string): Uint8Array<ArrayBuffer> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), body]));
}

function decrypt(key: Buffer, sealedBytes: Uint8Array, aad: string): Buffer {
  const sealed = Buffer.from(sealedBytes.buffer, sealedBytes.byteOffset, sealedBytes.byteLength);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}
