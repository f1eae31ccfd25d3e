import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedMaintenance, type MaintenanceLog } from './embedded-maintenance.js';
import { initdbImage } from './initdb-image.js';
import { PreparedPGlite, type PGliteClient } from './prepared-pglite.js';

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
  /** What the services' Prisma clients query through: PGlite with cached prepared statements. */
  readonly client: PGliteClient;
  private maintenance?: EmbeddedMaintenance;

  private constructor(
    readonly pglite: PGlite,
    private readonly lockFile?: string,
    private readonly dataDir?: string,
  ) {
    this.client = new PreparedPGlite(pglite).client();
  }

  /** Opens (or creates) the database in `dataDir`, or in memory when `dataDir` is undefined. */
  static async open(dataDir?: string): Promise<EmbeddedPostgres> {
    if (!dataDir)
      return new EmbeddedPostgres(await PGlite.create({ loadDataDir: await initdbImage() }));
    // The data dir holds every tenant's data and (standalone) the vault's master key: only this
    // server's user may enter it, and what it writes there is its own (workloads run as other users).
    process.umask(0o077);
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dataDir, 0o700);
    const lockFile = takeLock(dataDir);
    try {
      const pgdata = path.join(dataDir, 'pgdata');
      // A new data directory starts from the initialised image instead of running initdb.
      const isNew = !fs.existsSync(path.join(pgdata, 'PG_VERSION'));
      const pglite = await PGlite.create({
        dataDir: pgdata,
        loadDataDir: isNew ? await initdbImage() : undefined,
      });
      privateTree(dataDir);
      return new EmbeddedPostgres(pglite, lockFile, dataDir);
    } catch (err) {
      releaseLock(lockFile);
      throw err;
    }
  }

  /** Vacuums and analyzes tables as they grow, as PostgreSQL's autovacuum would (EmbeddedMaintenance). */
  startMaintenance(log: MaintenanceLog): void {
    this.maintenance ??= new EmbeddedMaintenance(this.pglite, log);
    this.maintenance.start();
  }

  async close(): Promise<void> {
    try {
      await this.maintenance?.stop();
      if (!this.pglite.closed) await this.pglite.close();
      if (this.dataDir) privateTree(this.dataDir);
    } finally {
      if (this.lockFile) releaseLock(this.lockFile);
    }
  }
}

/**
 * PGlite creates its files 0666 whatever the umask: they are made 0600 (directories 0700) when the
 * database opens and closes. Files it adds while it runs stay unreachable to other users anyway,
 * since the data directory itself is 0700.
 */
function privateTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) fs.chmodSync(file, 0o700);
    else if (entry.isFile()) fs.chmodSync(file, 0o600);
  }
}

/**
 * Lock files held by this process. The pid in a lock file cannot tell "opened twice by this
 * process" from "left behind by a dead process that had our pid" (containers restart with the
 * same pid), so this process remembers its own locks.
 */
const heldLocks = new Set<string>();

/** PGlite must never be opened twice at once (by two processes, or twice in one): that corrupts the data directory. */
function takeLock(dataDir: string): string {
  const lockFile = path.resolve(dataDir, 'runplane.lock');
  if (heldLocks.has(lockFile)) {
    throw new Error(`data directory ${dataDir} is already open in this process`);
  }
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      heldLocks.add(lockFile);
      return lockFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
    }
    const holder = readHolder(lockFile);
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new Error(
        `data directory ${dataDir} is in use by process ${holder}; stop it first or choose another RUNPLANE_DATA_DIR`,
      );
    }
    // A stale lock of a process that died (or unreadable garbage): remove it and retry `wx`.
    fs.rmSync(lockFile, { force: true });
  }
}

function releaseLock(lockFile: string): void {
  heldLocks.delete(lockFile);
  fs.rmSync(lockFile, { force: true });
}

function readHolder(lockFile: string): number {
  try {
    return Number(fs.readFileSync(lockFile, 'utf8').trim());
  } catch {
    return 0; // removed meanwhile
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
