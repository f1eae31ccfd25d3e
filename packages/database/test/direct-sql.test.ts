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
  });
}

contract('the embedded database', async () => {
  const embedded = await EmbeddedPostgres.open();
  await embedded.pglite.exec(TABLE);
  return { sql: new EmbeddedDirectSql(embedded.client), close: () => embedded.close() };
});

if (pgUp)
  contract('PostgreSQL', async () => {
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
  });
