import { jest } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { initdbImage } from '../src/initdb-image.js';
import { EmbeddedMaintenance } from '../src/embedded-maintenance.js';

describe('EmbeddedMaintenance', () => {
  let pg: PGlite;
  const log = { debug: jest.fn(), warn: jest.fn() };

  beforeEach(async () => {
    pg = await PGlite.create({ loadDataDir: await initdbImage() });
    await pg.exec(`
      CREATE SCHEMA app;
      CREATE TABLE app.job (id int PRIMARY KEY, status text NOT NULL, queued_at timestamp NOT NULL);
      CREATE INDEX ON app.job (status);
      CREATE TABLE app.setting (name text PRIMARY KEY, value text)`);
  });
  afterEach(() => pg.close());

  const fill = (from: number, to: number, status: string) =>
    pg.exec(
      `INSERT INTO app.job SELECT g, '${status}', now() FROM generate_series(${from}, ${to}) g`,
    );
  const statistics = async () =>
    (
      await pg.query<{ name: string; tuples: number }>(`
        SELECT c.relname AS name, c.reltuples::int AS tuples FROM pg_class c
        WHERE c.relnamespace = 'app'::regnamespace AND c.relkind = 'r' ORDER BY 1`)
    ).rows;
  const pages = async () =>
    (await pg.query<{ pages: number }>("SELECT pg_relation_size('app.job')::int / 8192 AS pages"))
      .rows[0].pages;
  const plan = async (sql: string) =>
    (await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');

  it('analyzes a table never analyzed, so that its plans see its real contents', async () => {
    await fill(1, 20_000, 'QUEUED');
    const count = "SELECT count(*) FROM app.job WHERE status = 'QUEUED'";
    // Without statistics Postgres guesses a few matching rows and goes through the index.
    expect(await plan(count)).toMatch(/Bitmap Index Scan/);

    const maintenance = new EmbeddedMaintenance(pg, log);
    expect(await maintenance.runOnce()).toEqual(['app.job']); // the tiny settings table is left alone
    expect(await statistics()).toEqual([
      { name: 'job', tuples: 20_000 },
      { name: 'setting', tuples: -1 },
    ]);
    expect(await plan(count)).toMatch(/Seq Scan on job/);
    expect(await maintenance.runOnce()).toEqual([]); // nothing changed since
  });

  it('vacuums a table again once it grew by a fifth, reclaiming the dead rows of updates', async () => {
    await fill(1, 10_000, 'QUEUED');
    const maintenance = new EmbeddedMaintenance(pg, log);
    await maintenance.runOnce();
    await fill(10_001, 11_000, 'QUEUED');
    expect(await maintenance.runOnce()).toEqual([]); // a tenth more: not yet

    await pg.exec("UPDATE app.job SET status = 'DONE' WHERE id <= 5000");
    expect(await maintenance.runOnce()).toEqual(['app.job']);
    expect((await statistics())[0]).toEqual({ name: 'job', tuples: 11_000 });
    expect(await plan("SELECT * FROM app.job WHERE status = 'DONE'")).toMatch(/rows=5\d{3} /);
    // The old versions of the updated rows were reclaimed: new rows fill their space.
    const before = await pages();
    await fill(20_001, 24_000, 'QUEUED');
    expect(await pages()).toBeLessThanOrEqual(before + 1);
  });

  it('looks again, after the refresh period, at a table whose size moved at all', async () => {
    await fill(1, 10_000, 'QUEUED');
    const maintenance = new EmbeddedMaintenance(pg, log, { refreshMs: 60_000 });
    const start = Date.now();
    await maintenance.runOnce(start);
    await fill(10_001, 10_500, 'QUEUED');
    expect(await maintenance.runOnce(start + 30_000)).toEqual([]);
    expect(await maintenance.runOnce(start + 61_000)).toEqual(['app.job']);
    expect(await maintenance.runOnce(start + 200_000)).toEqual([]); // unchanged since
  });

  it('runs on its timer until stopped', async () => {
    await fill(1, 10_000, 'QUEUED');
    const maintenance = new EmbeddedMaintenance(pg, log, { intervalMs: 20 });
    maintenance.start();
    while ((await statistics())[0].tuples < 0) await new Promise((r) => setTimeout(r, 20));
    await maintenance.stop();
    expect(log.warn).not.toHaveBeenCalled();
    expect(log.debug).toHaveBeenCalledWith(
      expect.objectContaining({ table: 'app.job' }),
      'embedded database: table vacuumed and analyzed',
    );
  });
});
