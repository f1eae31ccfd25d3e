import type { PGlite } from '@electric-sql/pglite';

export interface MaintenanceLog {
  debug(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface MaintenanceOptions {
  /** How often tables are looked at. */
  intervalMs?: number;
  /** A table that changed is vacuumed and analyzed again at least this often. */
  refreshMs?: number;
}

interface TableSize {
  schema: string;
  name: string;
  /** Pages now. */
  pages: number;
  /** Pages when it was last vacuumed or analyzed; -1 in `tuples`: never analyzed. */
  recordedPages: number;
  tuples: number;
}

/** Tables smaller than this are read whole whatever the plan: not worth a look. */
const SMALL_TABLE_PAGES = 8;
/** Growth since the last VACUUM that calls for another, as autovacuum's default scale factor. */
const GROWTH_FACTOR = 0.2;

/**
 * PostgreSQL's autovacuum for the embedded database, which has none: PGlite runs Postgres as a
 * single backend, so no table is ever vacuumed or analyzed unless asked. Without statistics the
 * planner guesses, and a plan cached while a table was small stays in use as it grows: under a
 * 30 s `/run` load (120,000 queued jobs) the expiry and result sweeps took 9.5 ms each, 0.9–1.6 ms
 * once the tables were analyzed, and the autoscaler's count of the queue sorted its rows on disk.
 * ANALYZE gives the planner the table's real contents and drops the plans cached before. Without
 * VACUUM the dead rows every claim and finish leaves behind are never reclaimed.
 *
 * Every `intervalMs` each table's size is compared with the size recorded at its last VACUUM or
 * ANALYZE; one never analyzed, grown by more than a fifth, or changed and not vacuumed for
 * `refreshMs` gets `VACUUM (ANALYZE)`. They run on the database's single connection between
 * statements (PGlite's mutex): a large table costs a pause of tens of milliseconds now and then.
 */
export class EmbeddedMaintenance {
  private readonly intervalMs: number;
  private readonly refreshMs: number;
  private readonly lastVacuum = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly pg: PGlite,
    private readonly log: MaintenanceLog,
    options: MaintenanceOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.refreshMs = options.refreshMs ?? 10 * 60_000;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running || this.pg.closed) return;
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.log.warn({ err: String(err) }, 'embedded database maintenance failed'),
        )
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round; returns the tables it vacuumed, as `schema.table` (public for tests). */
  async runOnce(now = Date.now()): Promise<string[]> {
    const done: string[] = [];
    for (const table of await this.tableSizes()) {
      const key = `${table.schema}.${table.name}`;
      if (!this.due(table, this.lastVacuum.get(key), now)) continue;
      const started = performance.now();
      await this.pg.exec(`VACUUM (ANALYZE) ${quote(table.schema)}.${quote(table.name)}`);
      this.lastVacuum.set(key, now);
      done.push(key);
      this.log.debug(
        { table: key, pages: table.pages, ms: Math.round(performance.now() - started) },
        'embedded database: table vacuumed and analyzed',
      );
    }
    return done;
  }

  private due(table: TableSize, lastVacuum: number | undefined, now: number): boolean {
    if (table.pages < SMALL_TABLE_PAGES) return false;
    if (table.tuples < 0) return true;
    const changed = table.pages !== table.recordedPages;
    if (table.pages > table.recordedPages * (1 + GROWTH_FACTOR) + SMALL_TABLE_PAGES) return true;
    // Updates in place leave the size alone but not the statistics (a queue that ran): a table
    // whose size moved at all is looked at again after refreshMs.
    return changed && now - (lastVacuum ?? 0) >= this.refreshMs;
  }

  private async tableSizes(): Promise<TableSize[]> {
    const { rows } = await this.pg.query<TableSize>(`
      SELECT n.nspname AS schema, c.relname AS name,
        (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages,
        c.relpages AS "recordedPages", c.reltuples::float8 AS tuples
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      ORDER BY 1, 2`);
    return rows;
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
