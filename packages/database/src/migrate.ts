import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SqlSession } from './sql-session.js';

export interface MigrationLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies a service's Prisma migrations (`prisma/migrations/<name>/migration.sql`) to its schema,
 * exactly compatible with Prisma Migrate's `_prisma_migrations` table: same DDL, sha256 checksums,
 * lexicographic order, the same advisory lock. So `prisma migrate deploy|status` can take over
 * wherever Prisma's native engine is available, and nothing needs it offline.
 *
 * Differences from Prisma: a failed migration is rolled back and not recorded (Prisma records a
 * failed row); each migration runs in one transaction (Prisma's script is implicitly atomic too).
 */
export async function applyMigrations(
  session: SqlSession,
  schema: string,
  migrationsDir: string,
  log?: MigrationLog,
): Promise<MigrationResult> {
  const s = quoteIdent(schema);
  const release = await session.lockMigrations();
  try {
    // Postgres checks the database-level CREATE privilege even for IF NOT EXISTS, so a schema an
    // operator created beforehand for a restricted user must not be "created" again.
    const [existing] = await session.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
      schema,
    ]);
    if (!existing) await session.exec(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await session.exec(`CREATE TABLE IF NOT EXISTS ${s}."_prisma_migrations" (
        id VARCHAR(36) PRIMARY KEY NOT NULL,
        checksum VARCHAR(64) NOT NULL,
        finished_at TIMESTAMPTZ,
        migration_name VARCHAR(255) NOT NULL,
        logs TEXT,
        rolled_back_at TIMESTAMPTZ,
        started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        applied_steps_count INTEGER NOT NULL DEFAULT 0
      );`);
    const rows = await session.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      rolled_back_at: Date | null;
    }>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM ${s}."_prisma_migrations"`,
    );
    const failed = rows.filter((r) => !r.finished_at && !r.rolled_back_at);
    if (failed.length) {
      throw new Error(
        `schema "${schema}" has failed migrations (${failed.map((r) => r.migration_name).join(', ')}); resolve them before migrating (prisma migrate resolve)`,
      );
    }
    // A finished row that was later marked rolled back does not count as applied (as in Prisma).
    const applied = new Map(
      rows
        .filter((r) => r.finished_at && !r.rolled_back_at)
        .map((r) => [r.migration_name, r.checksum]),
    );
    const result: MigrationResult = { applied: [], alreadyApplied: 0 };
    for (const migration of readMigrations(migrationsDir)) {
      const known = applied.get(migration.name);
      if (known !== undefined) {
        result.alreadyApplied += 1;
        if (!checksumMatches(known, migration.sql))
          log?.warn(
            `migration ${migration.name} was edited after it was applied to schema "${schema}"`,
          );
        continue;
      }
      await session
        .transaction(async (tx) => {
          await tx.exec(`SET LOCAL search_path TO ${s}`);
          await tx.exec(migration.sql);
          await tx.query(
            `INSERT INTO ${s}."_prisma_migrations" (id, checksum, finished_at, migration_name, logs, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, NULL, now(), 1)`,
            [randomUUID(), sha256(migration.sql), migration.name],
          );
        })
        .catch((err: Error) => {
          throw new Error(
            `migration ${migration.name} failed on schema "${schema}" (rolled back, nothing recorded): ${err.message}`,
            { cause: err },
          );
        });
      log?.info(`applied migration ${migration.name} to schema "${schema}"`);
      result.applied.push(migration.name);
    }
    return result;
  } finally {
    await release();
  }
}

export interface MigrationFile {
  name: string;
  sql: string;
}

export function readMigrations(migrationsDir: string): MigrationFile[] {
  if (!fs.existsSync(migrationsDir)) return [];
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter(
      (d) => d.isDirectory() && fs.existsSync(path.join(migrationsDir, d.name, 'migration.sql')),
    )
    .map((d) => d.name)
    .sort()
    .map((name) => ({
      name,
      sql: fs.readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8'),
    }));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Prisma accepts the checksum of the file with either line ending. */
function checksumMatches(stored: string, sql: string): boolean {
  return [sql, sql.replace(/\r\n/g, '\n'), sql.replace(/(?<!\r)\n/g, '\r\n')].some(
    (v) => sha256(v) === stored,
  );
}

export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid schema name "${name}"`);
  return `"${name}"`;
}
