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
  // Like PGlite's mutex: a transaction holds the connection, and statements from other callers
  // wait for it to end instead of silently running (and rolling back) inside it.
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = tail.then(fn);
    tail = result.catch(() => {});
    return result;
  };
  const direct: SqlTx = {
    query: async (sql, params) => (await client.query(sql, params)).rows,
    exec: async (script) => void (await client.query(script)),
  };
  return {
    query: (sql, params) => exclusive(() => direct.query(sql, params)),
    exec: (script) => exclusive(() => direct.exec(script)),
    transaction: (fn) =>
      exclusive(async () => {
        await client.query('BEGIN');
        try {
          const result = await fn(direct);
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      }),
    lockMigrations: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await exclusive(() =>
          direct.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
            PRISMA_MIGRATION_LOCK,
          ]),
        );
        if (row.ok)
          return async () =>
            void (await exclusive(() =>
              direct.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATION_LOCK]),
            ));
        if (Date.now() > deadline)
          throw new Error(
            `timed out after ${timeoutMs} ms waiting for the migration lock (another migration is running)`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    close: () => exclusive(() => client.end()),
  };
}

/** A session on a PGlite instance; closing it leaves the instance open (its owner closes it). */
export function pgliteSession(db: PGlite): SqlSession {
  return {
    query: async (sql, params) => (await db.query(sql, params)).rows as never,
    exec: async (script) => void (await db.exec(script)),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          query: async (sql, params) => (await tx.query(sql, params)).rows as never,
          exec: async (script) => void (await tx.exec(script)),
        }),
      ),
    lockMigrations: async () => async () => {},
    close: async () => {},
  };
}

/**
 * Connects, creating the database first when it does not exist yet (a new cluster: each service
 * has its own database and nobody should have to create six by hand).
 */
async function connectCreatingDatabase(url: string): Promise<pg.Client> {
  try {
    return await connect(url);
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
  }
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const adminClient = await connect(admin.toString());
  try {
    await adminClient.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    // Created meanwhile by a sibling: 42P04 if it committed first, 23505 (pg_database's unique
    // index) if both were creating it at the same moment.
    const code = (err as { code?: string }).code;
    if (code !== '42P04' && code !== '23505') throw err;
  } finally {
    await adminClient.end();
  }
  return connect(url);
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  // Without a listener, a dropped idle connection (server restart, network) emits an unhandled
  // 'error' and kills the process; with one, the next query fails instead.
  client.on('error', () => {});
  await client.connect();
  return client;
}
