import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import { EmbeddedPostgres } from '../src/embedded-postgres.js';
import { applyMigrations, type MigrationLog } from '../src/migrate.js';
import { openSqlSession, type SqlSession } from '../src/sql-session.js';
import type { DatabaseTarget } from '../src/target.js';

const pgUp = await requireService('postgres', 'database migration runner on PostgreSQL');

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'runplane-migrate-'));
afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

let dirCount = 0;
/** A fresh migrations directory; written in reverse so directory order cannot stand in for sorting. */
function migrationsDir(files: Record<string, string>): string {
  const dir = path.join(tmpRoot, `m${dirCount++}`);
  for (const name of Object.keys(files).reverse()) {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    fs.writeFileSync(path.join(dir, name, 'migration.sql'), files[name]);
  }
  return dir;
}

// `b` only works after `a`, so a wrong order fails loudly.
const BASE = {
  '20240101000000_create_job':
    'CREATE TABLE "Job" ("id" TEXT NOT NULL, CONSTRAINT "Job_pkey" PRIMARY KEY ("id"));\n',
  '20240102000000_add_status':
    'ALTER TABLE "Job" ADD COLUMN "status" TEXT NOT NULL DEFAULT \'QUEUED\';\nCREATE INDEX "Job_status_idx" ON "Job"("status");\n',
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function collectingLog(): MigrationLog & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info: () => {}, warn: (msg) => warnings.push(msg) };
}

/** The runner's behaviour, identical on both backends; `s` is the suite's shared session. */
function runnerSuite(name: string, s: () => SqlSession) {
  describe(`applyMigrations on ${name}`, () => {
    const columns = async (schema: string, table: string) =>
      (
        await s().query<{ column_name: string }>(
          'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
          [schema, table],
        )
      ).map((r) => r.column_name);
    const migrationRows = (schema: string) =>
      s().query<{
        migration_name: string;
        checksum: string;
        finished_at: Date | null;
        rolled_back_at: Date | null;
        applied_steps_count: number;
      }>(
        `SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count FROM "${schema}"."_prisma_migrations" ORDER BY migration_name`,
      );

    it('applies pending migrations in lexicographic order into the schema, then nothing on the next run', async () => {
      const schema = uniqueName('svc');
      const dir = migrationsDir(BASE);

      const first = await applyMigrations(s(), schema, dir);
      expect(first).toEqual({ applied: Object.keys(BASE), alreadyApplied: 0 });
      expect(await columns(schema, 'Job')).toEqual(['id', 'status']);
      expect(await columns('public', 'Job')).toEqual([]);

      const second = await applyMigrations(s(), schema, dir);
      expect(second).toEqual({ applied: [], alreadyApplied: 2 });
    });

    it('records each migration like Prisma: sha256 checksum of the file, finished_at set', async () => {
      const schema = uniqueName('svc');
      await applyMigrations(s(), schema, migrationsDir(BASE));
      const rows = await migrationRows(schema);
      expect(rows.map((r) => r.migration_name)).toEqual(Object.keys(BASE));
      for (const row of rows) {
        expect(row.checksum).toBe(sha256(BASE[row.migration_name as keyof typeof BASE]));
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.rolled_back_at).toBeNull();
        expect(row.applied_steps_count).toBe(1);
      }
    });

    it('rolls a broken migration back entirely, records nothing, and retries it on the next run', async () => {
      const schema = uniqueName('svc');
      const broken = '20240103000000_broken';
      const dir = migrationsDir({
        ...BASE,
        [broken]: 'CREATE TABLE "Partial" ("id" INT);\nALTER TABLE "Nope" ADD COLUMN "x" INT;\n',
      });

      await expect(applyMigrations(s(), schema, dir)).rejects.toThrow(
        new RegExp(
          `migration ${broken} failed on schema "${schema}".*relation "Nope" does not exist`,
        ),
      );
      // The migrations before it stay applied; none of it does.
      expect(await columns(schema, 'Job')).toEqual(['id', 'status']);
      expect(await columns(schema, 'Partial')).toEqual([]);
      expect((await migrationRows(schema)).map((r) => r.migration_name)).toEqual(Object.keys(BASE));

      fs.writeFileSync(
        path.join(dir, broken, 'migration.sql'),
        'CREATE TABLE "Partial" ("id" INT);\n',
      );
      expect(await applyMigrations(s(), schema, dir)).toEqual({
        applied: [broken],
        alreadyApplied: 2,
      });
      expect(await columns(schema, 'Partial')).toEqual(['id']);
    });

    it('gives two schemas independent copies of the same migrations', async () => {
      const [a, b] = [uniqueName('svca'), uniqueName('svcb')];
      const dir = migrationsDir(BASE);
      await applyMigrations(s(), a, dir);
      expect((await applyMigrations(s(), b, dir)).applied).toEqual(Object.keys(BASE));

      await s().query(`INSERT INTO "${a}"."Job" ("id") VALUES ('only-in-a')`);
      expect(await s().query(`SELECT id FROM "${a}"."Job"`)).toEqual([{ id: 'only-in-a' }]);
      expect(await s().query(`SELECT id FROM "${b}"."Job"`)).toEqual([]);
      expect(await migrationRows(b)).toHaveLength(2);
    });

    it('warns when an applied migration was edited, but not for a mere line-ending change', async () => {
      const schema = uniqueName('svc');
      const dir = migrationsDir(BASE);
      await applyMigrations(s(), schema, dir);
      const file = path.join(dir, '20240101000000_create_job', 'migration.sql');

      fs.writeFileSync(file, BASE['20240101000000_create_job'].replace(/\n/g, '\r\n'));
      const crlf = collectingLog();
      await applyMigrations(s(), schema, dir, crlf);
      expect(crlf.warnings).toEqual([]);

      fs.appendFileSync(file, '-- edited\n');
      const log = collectingLog();
      expect(await applyMigrations(s(), schema, dir, log)).toEqual({
        applied: [],
        alreadyApplied: 2,
      });
      expect(log.warnings).toEqual([
        `migration 20240101000000_create_job was edited after it was applied to schema "${schema}"`,
      ]);
    });

    it('refuses to run while a failed migration is recorded, and proceeds once it is marked rolled back', async () => {
      const schema = uniqueName('svc');
      const dir = migrationsDir(BASE);
      await applyMigrations(
        s(),
        schema,
        migrationsDir({ '20240101000000_create_job': BASE['20240101000000_create_job'] }),
      );
      // What Prisma leaves behind when a migration fails half-way.
      await s().query(
        `INSERT INTO "${schema}"."_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
         VALUES ('00000000-0000-4000-8000-000000000001', $1, '20240102000000_add_status', now(), 0)`,
        [sha256(BASE['20240102000000_add_status'])],
      );

      await expect(applyMigrations(s(), schema, dir)).rejects.toThrow(
        `schema "${schema}" has failed migrations (20240102000000_add_status); resolve them before migrating (prisma migrate resolve)`,
      );
      expect(await columns(schema, 'Job')).toEqual(['id']);

      await s().query(
        `UPDATE "${schema}"."_prisma_migrations" SET rolled_back_at = now() WHERE finished_at IS NULL`,
      );
      expect((await applyMigrations(s(), schema, dir)).applied).toEqual([
        '20240102000000_add_status',
      ]);
      expect(await columns(schema, 'Job')).toEqual(['id', 'status']);
    });

    it('rejects a schema name that is not a plain identifier', async () => {
      await expect(applyMigrations(s(), 'bad"name', migrationsDir(BASE))).rejects.toThrow(
        'invalid schema name "bad"name"',
      );
    });
  });
}

// ---------------------------------------------------------------------------------------------

describe('embedded (in-memory PGlite)', () => {
  let embedded: EmbeddedPostgres;
  let session: SqlSession;
  beforeAll(async () => {
    embedded = await EmbeddedPostgres.open();
    session = await openSqlSession({
      kind: 'embedded',
      service: 'queue-api',
      embedded,
      schema: 'queue_api',
    });
  });
  afterAll(async () => {
    await session?.close();
    await embedded?.close();
  });

  runnerSuite('embedded Postgres', () => session);
});

if (pgUp) {
  describe('PostgreSQL', () => {
    const dbName = uniqueName('runplane_migrate');
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${dbName}`;
    const target: DatabaseTarget = {
      kind: 'postgres',
      service: 'queue-api',
      url: url.toString(),
      schema: 'queue_api',
    };
    const open: SqlSession[] = [];
    const openSession = async () => {
      const s = await openSqlSession(target);
      open.push(s);
      return s;
    };
    let session: SqlSession;

    async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      try {
        return await fn(c);
      } finally {
        await c.end();
      }
    }
    const databaseExists = (name: string) =>
      admin(
        async (c) =>
          (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
      );
    const dropDatabase = (name: string) =>
      admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

    beforeAll(async () => {
      session = await openSession();
    });
    afterAll(async () => {
      await Promise.all(open.map((s) => s.close().catch(() => {})));
      await dropDatabase(dbName);
    });

    it('openSqlSession creates a missing database, also when several sessions race to create it', async () => {
      const name = uniqueName('runplane_create');
      const u = new URL(POSTGRES_URL);
      u.pathname = `/${name}`;
      expect(await databaseExists(name)).toBe(false);
      try {
        const sessions = await Promise.all(
          [1, 2, 3].map(() => openSqlSession({ ...target, url: u.toString() })),
        );
        expect(await databaseExists(name)).toBe(true);
        expect(await sessions[0].query('SELECT current_database() AS db')).toEqual([{ db: name }]);
        await Promise.all(sessions.map((s) => s.close()));
      } finally {
        await dropDatabase(name);
      }
    });

    runnerSuite('PostgreSQL', () => session);

    it('serializes concurrent runs with the advisory lock: both succeed, each migration applies once', async () => {
      const schema = uniqueName('svc');
      // Slow enough that the second run certainly arrives while the first holds the lock.
      const dir = migrationsDir({
        ...BASE,
        '20240103000000_slow': 'SELECT pg_sleep(0.5);\nCREATE TABLE "Slow" ("id" INT);\n',
      });
      const [a, b] = [await openSession(), await openSession()];
      const results = await Promise.all([
        applyMigrations(a, schema, dir),
        applyMigrations(b, schema, dir),
      ]);

      expect(results.map((r) => r.applied.length).sort()).toEqual([0, 3]);
      expect(results.map((r) => r.alreadyApplied).sort()).toEqual([0, 3]);
      const rows = await session.query<{ migration_name: string; n: string }>(
        `SELECT migration_name, count(*) AS n FROM "${schema}"."_prisma_migrations" GROUP BY migration_name ORDER BY migration_name`,
      );
      expect(rows).toEqual(
        [...Object.keys(BASE), '20240103000000_slow'].map((m) => ({ migration_name: m, n: '1' })),
      );
    });

    it('migrates a schema created beforehand for a user without CREATE on the database', async () => {
      const role = uniqueName('runplane_svc');
      const schema = uniqueName('svc');
      await session.exec(
        `CREATE ROLE "${role}" LOGIN; CREATE SCHEMA "${schema}" AUTHORIZATION "${role}"`,
      );
      try {
        const u = new URL(target.url);
        u.username = role;
        const restricted = await openSqlSession({ ...target, url: u.toString() });
        try {
          expect((await applyMigrations(restricted, schema, migrationsDir(BASE))).applied).toEqual(
            Object.keys(BASE),
          );
          await expect(
            applyMigrations(restricted, uniqueName('svc'), migrationsDir(BASE)),
          ).rejects.toThrow('permission denied');
        } finally {
          await restricted.close();
        }
      } finally {
        await session.exec(`DROP SCHEMA "${schema}" CASCADE; DROP ROLE "${role}"`);
      }
    });

    it('keeps statements of other callers out of a running transaction', async () => {
      await session.exec('CREATE TABLE IF NOT EXISTS public.tx_isolation (v TEXT)');
      let inside!: () => void;
      const entered = new Promise<void>((r) => {
        inside = r;
      });
      const tx = session.transaction(async (t) => {
        await t.query("INSERT INTO public.tx_isolation VALUES ('rolled back')");
        inside();
        await new Promise((r) => setTimeout(r, 100));
        throw new Error('abort');
      });
      await entered;
      // Issued while the transaction is open: must wait for it, not join it and be rolled back.
      const outside = session.query("INSERT INTO public.tx_isolation VALUES ('kept')");
      await expect(tx).rejects.toThrow('abort');
      await outside;
      expect(await session.query('SELECT v FROM public.tx_isolation')).toEqual([{ v: 'kept' }]);
    });

    it('gives up waiting for the migration lock after the timeout', async () => {
      const holder = await openSession();
      const release = await holder.lockMigrations();
      try {
        await expect(session.lockMigrations(300)).rejects.toThrow(
          'timed out after 300 ms waiting for the migration lock',
        );
      } finally {
        await release();
      }
      await (
        await session.lockMigrations(300)
      )();
    });
  });
}
