import { PGlite } from '@electric-sql/pglite';
import { initdbImage } from '../src/initdb-image.js';
import { GENERIC_PLAN_HINT, PreparedPGlite } from '../src/prepared-pglite.js';

describe('PreparedPGlite', () => {
  let pg: PGlite;

  beforeEach(async () => {
    pg = await PGlite.create({ loadDataDir: await initdbImage() });
    await pg.exec('CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL, doc json)');
  });
  afterEach(() => pg.close());

  const prepared = async () =>
    (await pg.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name'))
      .rows;

  it('answers as PGlite.query does, preparing each text once', async () => {
    const client = new PreparedPGlite(pg).client();
    const insert = 'INSERT INTO item VALUES ($1, $2, $3::json) RETURNING id, name, doc';
    for (const id of [1, 2, 3])
      expect(await client.query(insert, [id, `n${id}`, JSON.stringify({ id })])).toEqual(
        await pg.query('SELECT id, name, doc FROM item WHERE id = $1', [id]).then((r) => ({
          ...r,
          command: 'INSERT',
          affectedRows: 1,
        })),
      );
    const select = 'SELECT id, name FROM item WHERE id = ANY($1::int[]) ORDER BY id';
    expect((await client.query(select, [[1, 3]], { rowMode: 'array' })).rows).toEqual([
      [1, 'n1'],
      [3, 'n3'],
    ]);
    expect(
      await client.query('SELECT count(*)::int AS n FROM item WHERE name = $1', [null]),
    ).toMatchObject({ rows: [{ n: 0 }] });
    expect((await prepared()).length).toBe(3);
  });

  it("applies the caller's parsers over PGlite's, whichever set a call brings", async () => {
    const client = new PreparedPGlite(pg).client();
    const sql = 'SELECT $1::int AS n, $2::text AS t';
    const tagged = { 23: (v: string) => `int:${v}` };
    expect((await client.query(sql, [1, 'a'], { parsers: tagged })).rows).toEqual([
      { n: 'int:1', t: 'a' },
    ]);
    expect((await client.query(sql, [2, 'b'], { parsers: tagged })).rows).toEqual([
      { n: 'int:2', t: 'b' },
    ]);
    expect(
      (await client.query(sql, [3, 'c'], { parsers: { 25: (v: string) => v.toUpperCase() } })).rows,
    ).toEqual([{ n: 3, t: 'C' }]);
    expect((await client.query(sql, [4, 'd'])).rows).toEqual([{ n: 4, t: 'd' }]);
  });

  it('reports errors with their code and stays usable', async () => {
    const client = new PreparedPGlite(pg).client();
    await expect(client.query('SELECT $1::int AS n', ['nope'])).rejects.toMatchObject({
      code: '22P02',
      query: 'SELECT $1::int AS n',
    });
    await expect(client.query('SELEKT 1')).rejects.toMatchObject({ code: '42601' });
    expect((await client.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
  });

  it('closes the least recently used statements beyond its capacity', async () => {
    const client = new PreparedPGlite(pg, 2).client();
    for (const n of [1, 2, 3, 1, 4]) await client.query(`SELECT ${n} AS n`);
    // 1, 2, 3 → 2 closed; 1 used again; 4 → 3 closed. Closes are sent with the next query.
    await client.query('SELECT 1 AS n');
    expect(await prepared()).toHaveLength(2);
    expect((await client.query('SELECT 3 AS n')).rows).toEqual([{ n: 3 }]);
  });

  it('runs transactions: committed, rolled back, and closed after their end', async () => {
    const client = new PreparedPGlite(pg).client();
    const insert = 'INSERT INTO item VALUES ($1, $2)';
    await client.transaction(async (tx) => {
      await tx.query(insert, [1, 'kept']);
    });
    await expect(
      client.transaction(async (tx) => {
        await tx.query(insert, [2, 'dropped']);
        await tx.query(insert, [1, 'duplicate']);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    let leaked: { query: (sql: string) => Promise<unknown> } | undefined;
    await client.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.query('SELECT 1')).rejects.toThrow('Transaction is closed');
    expect((await client.query('SELECT id, name FROM item')).rows).toEqual([
      { id: 1, name: 'kept' },
    ]);
  });

  it('plans a hinted statement once, and leaves the others to Postgres', async () => {
    const client = new PreparedPGlite(pg).client();
    const hinted = `${GENERIC_PLAN_HINT} SELECT count(*)::int AS n FROM item WHERE id = ANY($1::int[])`;
    const plain = 'SELECT count(*)::int AS n FROM item WHERE id = ANY($1::int[])';
    for (let i = 0; i < 3; i++) {
      expect((await client.query(hinted, [[1, 2]])).rows).toEqual([{ n: 0 }]);
      expect((await client.query(plain, [[1, 2]])).rows).toEqual([{ n: 0 }]);
    }
    await expect(
      client.transaction(async (tx) => {
        await tx.query(hinted, [[1]]);
        await tx.query('SELECT 1/0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    const plans = await pg.query<{
      statement: string;
      generic_plans: number;
      custom_plans: number;
    }>('SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements');
    expect(plans.rows.find((r) => r.statement === hinted)).toMatchObject({ custom_plans: 0 });
    expect(plans.rows.find((r) => r.statement === hinted)!.generic_plans).toBeGreaterThanOrEqual(3);
    expect(plans.rows.find((r) => r.statement === plain)).toMatchObject({ custom_plans: 3 });
    expect((await pg.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);
  });

  it('switches the plan mode only between hinted and plain statements, transactions included', async () => {
    const client = new PreparedPGlite(pg).client();
    const hinted = `${GENERIC_PLAN_HINT} SELECT count(*)::int AS n FROM item WHERE id = ANY($1::int[])`;
    const plain = 'SELECT count(*)::int AS n FROM item WHERE id > $1';
    const mode = async () =>
      (await pg.query<{ m: string }>('SELECT current_setting($1) AS m', ['plan_cache_mode']))
        .rows[0].m;
    const plans = async (statement: string) =>
      (
        await pg.query<{ generic_plans: number; custom_plans: number }>(
          'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = $1',
          [statement],
        )
      ).rows[0];
    await client.query(hinted, [[1]]);
    await client.query(hinted, [[2]]);
    expect(await mode()).toBe('force_generic_plan'); // left so for the next hinted statement
    // A plain statement in a transaction runs under auto, and the session's mode is back after
    // it, whether the transaction commits or rolls back.
    await client.transaction(async (tx) => {
      await tx.query(plain, [0]);
    });
    expect(await mode()).toBe('force_generic_plan');
    await expect(
      client.transaction(async (tx) => {
        await tx.query(plain, [0]);
        await tx.query('SELECT 1/0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await mode()).toBe('force_generic_plan');
    await client.query(plain, [0]);
    expect(await mode()).toBe('auto');
    await client.query(hinted, [[3]]);
    expect(await plans(plain)).toEqual({ generic_plans: 0, custom_plans: 3 });
    expect(await plans(hinted)).toEqual({ generic_plans: 3, custom_plans: 0 });
  });
});
