import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { POSTGRES_URL, requireService, uniqueName } from '@runplane/test-support';
import pg from 'pg';
import { DirectSql, EmbeddedDirectSql, PostgresDirectSql } from '../src/direct-sql.js';
import { EmbeddedPostgres } from '../src/embedded-postgres.js';
import { GENERIC_PLAN_HINT } from '../src/prepared-pglite.js';
import { statementNames } from '../src/prisma-client.js';

const pgUp = await requireService('postgres', 'DirectSql on PostgreSQL');

// Times are written the way the scheduler writes them (an ISO string cast to timestamp(3), UTC
// wall-clock, as Prisma stores DateTime) and must read back as the same instant whatever the
// process's time zone: both drivers' own parsers read `timestamp` as local time. This package's
// tests run in America/New_York (jest.config.js).
const TABLE = `CREATE TABLE item (id text PRIMARY KEY, at timestamp(3), doc json, n int8, flag boolean)`;
const written = new Date('2026-03-01T10:20:30.456Z');

function contract(name: string, open: () => Promise<{ sql: DirectSql; close(): Promise<void> }>) {
  describe(`DirectSql on ${name}`, () => {
    let db: { sql: DirectSql; close(): Promise<void> };

    beforeAll(async () => {
      db = await open();
    });
    afterAll(() => db?.close());

    it('runs away from UTC (jest.config.js), or it would prove nothing', () => {
      expect(written.getTimezoneOffset()).not.toBe(0);
    });

    it('reads rows back as Prisma does: UTC timestamps, parsed JSON, int8 as bigint', async () => {
      const insert = {
        text: `INSERT INTO item (id, at, doc, n, flag)
               SELECT id, at::timestamp(3), doc::json, n, flag
               FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::boolean[])
                 AS t(id, at, doc, n, flag)
               RETURNING id, at, doc, n, flag`,
        values: [
          ['a', 'b'],
          [written.toISOString(), null],
          [JSON.stringify({ x: [1, 'two'] }), null],
          [9007199254740993n.toString(), '1'],
          [true, false],
        ],
      };
      const rows = await db.sql.query<{ id: string; at: Date | null; doc: unknown; n: bigint }>(
        insert,
      );
      expect(rows).toEqual([
        { id: 'a', at: written, doc: { x: [1, 'two'] }, n: 9007199254740993n, flag: true },
        { id: 'b', at: null, doc: null, n: 1n, flag: false },
      ]);
    });

    it('sends a Date parameter as its UTC time', async () => {
      const [row] = await db.sql.query<{ at: Date }>({
        text: `UPDATE item SET at = $1::timestamp(3) WHERE id = $2 RETURNING at`,
        values: [written, 'b'],
      });
      expect(row.at).toEqual(written);
    });

    it('plans a statement marked GENERIC_PLAN_HINT once, and leaves the others to the database', async () => {
      const planMode = async (start: string) => {
        const text = `${start} SELECT current_setting('plan_cache_mode') AS mode`;
        const [row] = await db.sql.query<{ mode: string }>({ text, values: [] });
        return row.mode;
      };
      expect(await planMode(GENERIC_PLAN_HINT)).toBe('force_generic_plan');
      expect(await planMode('')).toBe('auto');
      expect(await planMode(`  ${GENERIC_PLAN_HINT}`)).toBe('force_generic_plan');
      expect(await planMode('/* another comment */')).toBe('auto');
    });

    it("fails a statement with the database's error, and goes on after it", async () => {
      await expect(
        db.sql.query({ text: 'INSERT INTO item (id) VALUES ($1)', values: ['a'] }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(
        await db.sql.query({ text: 'SELECT count(*)::int AS n FROM item', values: [] }),
      ).toEqual([{ n: 2 }]);
    });

    it('commits a transaction when its work resolves, on one connection, planned-once statements included', async () => {
      const insert = (id: string) => ({
        text: `${GENERIC_PLAN_HINT} INSERT INTO item (id, n) VALUES ($1, $2) RETURNING id, n`,
        values: [id, '5'],
      });
      const result = await db.sql.transaction(async (tx) => {
        const [row] = await tx.query<{ id: string; n: bigint }>(insert('tx-1'));
        await tx.query(insert('tx-2'));
        // Its own writes are visible inside, on the same connection: one session throughout.
        const [{ pid }] = await tx.query<{ pid: number }>({
          text: 'SELECT pg_backend_pid() AS pid',
          values: [],
        });
        const [{ again }] = await tx.query<{ again: number }>({
          text: `SELECT pg_backend_pid() AS again FROM item WHERE id = 'tx-2'`,
          values: [],
        });
        expect(again).toBe(pid);
        return row;
      });
      expect(result).toEqual({ id: 'tx-1', n: 5n });
      expect(await ids('tx-%')).toEqual(['tx-1', 'tx-2']);
    });

    it('rolls a transaction back when its work throws, rethrows, and goes on after it', async () => {
      const failure = new Error('changed my mind');
      await expect(
        db.sql.transaction(async (tx) => {
          await tx.query({ text: `INSERT INTO item (id) VALUES ('rb-1')`, values: [] });
          throw failure;
        }),
      ).rejects.toBe(failure);
      // A statement the database refuses rolls back the statements before it too.
      await expect(
        db.sql.transaction(async (tx) => {
          await tx.query({ text: `INSERT INTO item (id) VALUES ('rb-2')`, values: [] });
          await tx.query({ text: `INSERT INTO item (id) VALUES ('a')`, values: [] });
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await ids('rb-%')).toEqual([]);
      await db.sql.transaction((tx) =>
        tx.query({ text: `INSERT INTO item (id) VALUES ('rb-3')`, values: [] }),
      );
      expect(await ids('rb-%')).toEqual(['rb-3']);
    });

    const ids = async (like: string) =>
      (
        await db.sql.query<{ id: string }>({
          text: 'SELECT id FROM item WHERE id LIKE $1 ORDER BY id',
          values: [like],
        })
      ).map((r) => r.id);
  });
}

contract('the embedded database', async () => {
  const embedded = await EmbeddedPostgres.open();
  await embedded.pglite.exec(TABLE);
  return { sql: new EmbeddedDirectSql(embedded.client), close: () => embedded.close() };
});

if (pgUp) contract('PostgreSQL', openPostgres);

if (pgUp)
  describe('DirectSql on PostgreSQL: a connection lost during a transaction', () => {
    it('fails that transaction, not the process; the next one runs on a new connection', async () => {
      const db = await openPostgres();
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      try {
        const lost = db.sql.transaction(async (tx) => {
          const [{ pid }] = await tx.query<{ pid: number }>({
            text: 'SELECT pg_backend_pid() AS pid',
            values: [],
          });
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          // Idle between statements until the server has ended the session, as a restart would.
          while (
            (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount
          )
            await new Promise((resolve) => setTimeout(resolve, 10));
          await tx.query({ text: 'SELECT 1', values: [] });
        });
        await expect(lost).rejects.toThrow();
        expect(
          await db.sql.transaction((tx) => tx.query({ text: 'SELECT 1 AS one', values: [] })),
        ).toEqual([{ one: 1 }]);
      } finally {
        await admin.end();
        await db.close();
      }
    });
  });

async function openPostgres(): Promise<{ sql: DirectSql; close(): Promise<void> }> {
  const url = new URL(POSTGRES_URL);
  const schema = uniqueName('direct_sql');
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  url.searchParams.set('options', `-c search_path=${schema}`);
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  await pool.query(TABLE);
  const sql = new PostgresDirectSql(pool, statementNames());
  return {
    sql,
    close: async () => {
      await sql.close();
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}
