import { PGlite } from '@electric-sql/pglite';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** The installed PGlite's version (its package.json, next to the `dist` its entry point is in). */
const pgliteVersion: string = JSON.parse(
  fs.readFileSync(
    path.join(
      path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')),
      '../package.json',
    ),
    'utf8',
  ),
).version;

/**
 * A freshly initialised embedded cluster (PGlite's data directory right after its initdb) as a
 * tarball. Starting from it takes about a second where initdb takes four or more, and tests start
 * dozens of in-memory databases. It is made once per user and PGlite version and kept in a
 * directory of this user's own under the temporary directory; anything there that this user did
 * not write alone (another owner, group or world access) is ignored and initdb runs instead.
 * The image holds no data: a cluster with only PostgreSQL's own catalogues.
 */
export async function initdbImage(tmpDir = os.tmpdir()): Promise<Blob | undefined> {
  const dir = privateCacheDir(tmpDir);
  if (!dir) return undefined;
  const file = path.join(dir, `pglite-${pgliteVersion}-initdb.tar`);
  if (isOwnPrivateFile(file)) return new Blob([fs.readFileSync(file)]);
  const pg = await PGlite.create();
  try {
    const image = await pg.dumpDataDir('none');
    // Written aside and renamed: a process reading the cache never sees half a file. A cache that
    // cannot be written (a full disk) only means the next database runs initdb again.
    const partial = `${file}.${process.pid}.${Date.now()}`;
    try {
      fs.writeFileSync(partial, Buffer.from(await image.arrayBuffer()), { mode: 0o600 });
      fs.renameSync(partial, file);
    } catch {
      fs.rmSync(partial, { force: true });
    }
    return image;
  } finally {
    await pg.close();
  }
}

/** `<tmpDir>/runplane-<uid>`, created 0700; undefined when it exists but is not this user's alone. */
function privateCacheDir(tmpDir: string): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const dir = path.join(tmpDir, `runplane-${uid}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && isPrivateTo(stat, uid) ? dir : undefined;
  } catch {
    return undefined; // a temporary directory this user cannot write to: no cache
  }
}

function isOwnPrivateFile(file: string): boolean {
  try {
    const stat = fs.lstatSync(file);
    return stat.isFile() && isPrivateTo(stat, process.getuid?.());
  } catch {
    return false;
  }
}

/** Owned by `uid`, and neither its group nor anyone else may read or write it. */
function isPrivateTo(stat: fs.Stats, uid: number | undefined): boolean {
  return stat.uid === uid && (stat.mode & 0o077) === 0;
}
