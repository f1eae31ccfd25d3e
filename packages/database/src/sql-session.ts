import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { DatabaseTarget } from './target.js';

/** A statement runner inside a transaction. */
export interface SqlTx {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a multi-statement script (simple-query protocol, no parameters). */
  exec(script: string): Promise<void>;
}

/**
 * One connection to a target for administrative work (migrations, the bus journal): plain SQL,
 * transactions, and the migration lock. Services use their Prisma client for everything else.
 */
export interface SqlSession extends SqlTx {
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /** Takes Prisma's migration advisory lock, waiting up to `timeoutMs`; returns the release. */
  lockMigrations(timeoutMs?: number): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Prisma Migrate's advisory lock id: holding it keeps `prisma migrate deploy` out too. */
export const PRISMA_MIGRATION_LOCK = 72707369;

export async function openSqlSession(target: DatabaseTarget): Promise<SqlSession> {
  // One process owns the data directory (EmbeddedPostgres holds a lock file), so nothing races
  // and the migration lock is a no-op.
  if (target.kind === 'embedded') return pgliteSession(target.embedded.pglite);
  const client = await connectCreatingDatabase(target.url);
  const run: SqlTx = {
    query: async (sql, params) => (await client.query(sql, params)).rows,
    exec: async (script) => void (await client.query(script)),
  };
  return {
    ...run,
    transaction: async (fn) => {
      await client.query('BEGIN');
      try {
        const result = await fn(run);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    },
    lockMigrations: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [row] = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PRISMA_MIGRATION_LOCK])).rows;
        if (row.ok) return async () => void (await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATION_LOCK]));
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the migration lock (another migration is running)`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    close: () => client.end(),
  };
}

/** A session on a PGlite instance; closing it leaves the instance open (its owner closes it). */
export function pgliteSession(db: PGlite): SqlSession {
  return {
    query: async (sql, params) => (await db.query(sql, params)).rows as never,
    exec: async (script) => void (await db.exec(script)),
    transaction: (fn) => db.transaction((tx) => fn({
      query: async (sql, params) => (await tx.query(sql, params)).rows as never,
      exec: async (script) => void (await tx.exec(script)),
    })),
    lockMigrations: async () => async () => {},
    close: async () => {},
  };
}

/**
 * Connects, creating the database first when it does not exist yet (a new cluster: each service
 * has its own database and nobody should have to create six by hand).
 */
async function connectCreatingDatabase(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return client;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const adminClient = new pg.Client({ connectionString: admin.toString() });
  await adminClient.connect();
  try {
    await adminClient.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err; // created meanwhile by a sibling
  } finally {
    await adminClient.end();
  }
  const retry = new pg.Client({ connectionString: url });
  await retry.connect();
  return retry;
}
