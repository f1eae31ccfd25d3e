import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * The standalone server's storage: ONE embedded PostgreSQL (PGlite, in-process wasm) under
 * `RUNPLANE_DATA_DIR`, holding one Postgres schema per service. One instance instead of six keeps
 * start-up fast and memory low (~300 MB each); services still never share tables, and the same
 * migration files run here and on a real server.
 *
 * PGlite runs every query under one transaction mutex, so the services' Prisma clients can share it
 * safely; a transaction blocks the others until it ends, so never wait on the bus inside one.
 */
export class EmbeddedPostgres {
  private constructor(readonly pglite: PGlite, private readonly lockFile?: string) {}

  /** Opens (or creates) the database in `dataDir`, or in memory when `dataDir` is undefined. */
  static async open(dataDir?: string): Promise<EmbeddedPostgres> {
    if (!dataDir) return new EmbeddedPostgres(await PGlite.create());
    fs.mkdirSync(dataDir, { recursive: true });
    const lockFile = takeLock(dataDir);
    try {
      const pglite = await PGlite.create({ dataDir: path.join(dataDir, 'pgdata') });
      return new EmbeddedPostgres(pglite, lockFile);
    } catch (err) {
      fs.rmSync(lockFile, { force: true });
      throw err;
    }
  }

  async close(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
    if (this.lockFile) fs.rmSync(this.lockFile, { force: true });
  }
}

/** PGlite must never be opened by two processes at once: that corrupts the data directory. */
function takeLock(dataDir: string): string {
  const lockFile = path.join(dataDir, 'runplane.lock');
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return lockFile;
  } catch {
    const holder = Number(fs.readFileSync(lockFile, 'utf8'));
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new Error(`data directory ${dataDir} is in use by process ${holder}; stop it first or choose another RUNPLANE_DATA_DIR`);
    }
    fs.writeFileSync(lockFile, String(process.pid)); // stale lock of a process that died
    return lockFile;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
