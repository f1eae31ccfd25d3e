import pg from 'pg';
import { isPlannedOnce, type PGliteClient } from './prepared-pglite.js';

/** A statement with `$1`… placeholders and its values: what `Prisma.sql` builds (`text`, `values`). */
export interface SqlStatement {
  text: string;
  values: unknown[];
}

/** The statements of one transaction (`DirectSql.transaction`). */
export interface SqlTransaction {
  query<T>(statement: SqlStatement): Promise<T[]>;
}

/**
 * Raw statements on a service's own connections without Prisma's per-call work. `$queryRaw` costs
 * about as much CPU as the embedded database's execution of the scheduler's hot transitions
 * (serializing every parameter, interpreting a query plan, converting every result cell):
 * run through here instead, a job costs the standalone server about 13 % less CPU (CPU profiles of
 * 5,100-job runs, docs/performance.md). For the few statements every job goes through; the rest
 * stay on Prisma.
 *
 * Rows come back as `$queryRaw` returns them for the column types these statements use:
 * `timestamp` as a `Date` (UTC, as Prisma stores DateTime), `json`/`jsonb` parsed, `int8` as a
 * `bigint`, booleans and `int4` as such, enums and text as strings.
 */
export abstract class DirectSql {
  abstract query<T>(statement: SqlStatement): Promise<T[]>;

  /**
   * Runs `work` in one transaction on one connection, its statements through `tx`: committed when
   * it resolves, rolled back when it throws (the error is rethrown).
   */
  abstract transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T>;

  /** Releases what it holds besides the Prisma client's connections. */
  async close(): Promise<void> {}
}

/** On the embedded database: its client with prepared statements, and PGlite's parsers but for `timestamp` and `int8`. */
export class EmbeddedDirectSql extends DirectSql {
  constructor(private readonly client: PGliteClient) {
    super();
  }

  async query<T>({ text, values }: SqlStatement): Promise<T[]> {
    return (await this.client.query<T>(text, values.map(dateAsText), EMBEDDED_OPTIONS)).rows;
  }

  transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.client.transaction((tx) =>
      work({
        query: async <R>({ text, values }: SqlStatement) =>
          (await tx.query<R>(text, values.map(dateAsText), EMBEDDED_OPTIONS)).rows,
      }),
    );
  }
}

/** Connections per process for the statements planned once (docs/database.md counts them). */
const PLANNED_ONCE_CONNECTIONS = 4;

/**
 * On PostgreSQL: the pool the service's Prisma client uses, with the same statement names
 * (`statementNames()`): a text is prepared under one name per connection, whoever sends it.
 * Statements marked GENERIC_PLAN_HINT go to a few connections of their own whose sessions plan
 * each prepared statement once (`plan_cache_mode`): PostgreSQL's own choice kept re-planning the
 * job insert batch at every call (0.8 ms of planning; a hand-off insert replayed 2,000 times took
 * 0.99 ms p50 re-planned and 0.55 ms planned once, docs/performance.md), and the embedded
 * database plans the same statements once already.
 */
export class PostgresDirectSql extends DirectSql {
  private readonly plannedOnce: pg.Pool;

  constructor(
    private readonly pool: pg.Pool,
    private readonly nameFor: (query: { sql: string }) => string | undefined,
  ) {
    super();
    // (pg-pool keeps a given password out of its options' enumerable keys.)
    const { password } = pool.options;
    const config: PoolConfigWithConnectHook = {
      ...pool.options,
      password,
      max: PLANNED_ONCE_CONNECTIONS,
      // Awaited before the new connection serves its first statement; a failure fails that statement.
      onConnect: async (client) => {
        await client.query('SET plan_cache_mode = force_generic_plan');
      },
    };
    this.plannedOnce = new pg.Pool(config);
    // An idle connection that breaks (PostgreSQL restarted) leaves the pool; the next statement
    // opens a new one. Without a listener the pool's error would end the process.
    this.plannedOnce.on('error', () => {});
  }

  query<T>(statement: SqlStatement): Promise<T[]> {
    return this.run(isPlannedOnce(statement.text) ? this.plannedOnce : this.pool, statement);
  }

  /** On a planned-once connection: hot statements inside keep their single plan. */
  async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const client = await this.plannedOnce.connect();
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection lost meanwhile (PostgreSQL
    // restarted) would be an unhandled 'error' event, ending the process. Its statement fails.
    const lost = (err: Error) => (broken = err);
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work({ query: (statement) => this.run(client, statement) });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A connection that cannot even roll back is closed rather than returned to the pool.
      await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
      throw err;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  private async run<T>(on: pg.Pool | pg.PoolClient, { text, values }: SqlStatement): Promise<T[]> {
    const result = await on.query<T & pg.QueryResultRow>({
      name: this.nameFor({ sql: text }),
      text,
      values: values.map(dateAsText),
      types: PRISMA_LIKE_TYPES,
    });
    return result.rows;
  }

  override async close(): Promise<void> {
    await this.plannedOnce.end();
  }
}

/** pg-pool's hook for a new connection (pg-pool 3.14; not in @types/pg 8.16). */
type PoolConfigWithConnectHook = pg.PoolConfig & {
  onConnect?: (client: pg.PoolClient) => Promise<void>;
};

/** A Date parameter as Prisma sends one: its UTC time (pg would send the process's local time). */
function dateAsText(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

/**
 * Where the drivers' own parsers differ from Prisma: both read `timestamp` as the process's local
 * time (Prisma: UTC), and `int8` as a string (pg) or a number when it fits (PGlite).
 */
const PRISMA_LIKE_PARSERS: Record<number, (text: string) => unknown> = {
  1114: (text) => new Date(`${text.replace(' ', 'T')}Z`), // timestamp
  20: (text) => BigInt(text), // int8
};

/** One options object for every embedded query (PreparedPGlite merges its parsers once per set). */
const EMBEDDED_OPTIONS = { parsers: PRISMA_LIKE_PARSERS };

const PRISMA_LIKE_TYPES = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    PRISMA_LIKE_PARSERS[oid] ?? pg.types.getTypeParser(oid, format),
} as pg.CustomTypesConfig;
