import {
  parse,
  protocol,
  type ParserOptions,
  type PGlite,
  type QueryOptions,
  type Results,
  type Transaction,
} from '@electric-sql/pglite';
import { bindMessage, type BindValue } from './bind-message.js';

/**
 * Starts a statement whose plan should be made once and reused, whatever its parameters: the
 * hot job transitions, whose batches of arrays make Postgres's own choice plan them anew at
 * every call (a job insert batch: 1.4 ms re-planned, 0.6 ms with its generic plan). Not for
 * statements whose best plan depends on the values, such as range sweeps over a large table.
 * Honoured by the embedded database (PreparedPGlite) and by DirectSql on PostgreSQL.
 */
export const GENERIC_PLAN_HINT = '/* runplane: generic plan */';

/** Whether `sql` asks to be planned once (starts with GENERIC_PLAN_HINT). */
export function isPlannedOnce(sql: string): boolean {
  return sql.trimStart().startsWith(GENERIC_PLAN_HINT);
}

/** The part of PGlite that Prisma's PGlite adapter calls. */
export type PGliteClient = Pick<PGlite, 'query' | 'exec' | 'transaction'>;

type BackendMessage = Parameters<typeof parse.parseResults>[0][number];

interface Statement {
  name: string;
  paramTypes: number[];
  /** The columns it returns, as described once when prepared; none for a statement without rows. */
  rowDescription?: BackendMessage;
  /** Starts with GENERIC_PLAN_HINT. */
  generic: boolean;
  /** When it was last used (a count of uses across all statements): the least recent is evicted. */
  used: number;
}

/**
 * Named prepared statements for PGlite, which itself parses, analyses and plans every query
 * anew (`PGlite.query` sends an unnamed Parse each time). For the scheduler's multi-CTE
 * transitions that is most of their cost in the embedded Postgres: a claim took 1.2 ms as a
 * plain query, 0.14 ms prepared and 0.09 ms prepared with its generic plan (docs/performance.md). Each distinct SQL text is
 * prepared once, under a generated name, and then only bound and executed, in one message
 * buffer (one call into the WebAssembly Postgres instead of six).
 *
 * One instance per PGlite: every service's Prisma client shares the database's single session,
 * and so its prepared statements. Least recently used texts beyond `capacity` are closed (texts
 * vary with the length of `IN (...)` lists). Prepared statements outlive a transaction's rollback
 * in Postgres, so the cache stays true whatever happens to a transaction.
 */
export class PreparedPGlite {
  private readonly statements = new Map<string, Statement>();
  private readonly closing: string[] = [];
  private readonly mergedParsers = new WeakMap<
    ParserOptions,
    { base: PGlite['parsers']; all: PGlite['parsers'] }
  >();
  private sequence = 0;
  private uses = 0;
  /** The session's plan_cache_mode as last set outside a transaction; undefined: not known. */
  private sessionMode: 'force_generic_plan' | 'auto' | undefined;

  constructor(
    private readonly pg: PGlite,
    private readonly capacity = 500,
  ) {}

  /** A client for Prisma's adapter: `query` through the cache, transactions whose `query` is too. */
  client(): PGliteClient {
    const pg = this.pg;
    const client = {
      query: async <T>(sql: string, params?: unknown[], options?: QueryOptions) => {
        await pg._checkReady();
        return pg._runExclusiveTransaction(() =>
          pg._runExclusiveQuery(async () => {
            const result = await this.run<T>(sql, params ?? [], options, false);
            await pg.syncToFs();
            return result;
          }),
        );
      },
      exec: (sql: string, options?: QueryOptions) => pg.exec(sql, options),
      transaction: <T>(callback: (tx: Transaction) => Promise<T>) =>
        pg.transaction((tx) =>
          callback({
            ...tx,
            get closed() {
              return tx.closed;
            },
            query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => {
              if (tx.closed) throw new Error('Transaction is closed');
              return pg._runExclusiveQuery(() => this.run<R>(sql, params ?? [], options, true));
            },
          }),
        ),
    };
    return client as PGliteClient;
  }

  /** Runs one statement; the caller holds PGlite's query mutex. */
  private async run<T>(
    sql: string,
    params: unknown[],
    options: QueryOptions | undefined,
    inTransaction: boolean,
  ): Promise<Results<T>> {
    // A Close is a protocol message, not a statement, but an aborted transaction would still
    // refuse it until its end: closes wait for the next query outside a transaction.
    if (!inTransaction && this.closing.length) await this.closeEvicted();
    const statement = await this.prepare(sql, options);
    const values = params.map((param, i): BindValue => {
      if (param === null || param === undefined) return null;
      const oid = statement.paramTypes[i];
      const serialize = options?.serializers?.[oid] ?? this.pg.serializers[oid];
      return serialize ? (serialize(param) as BindValue) : String(param);
    });
    const { serialize } = protocol;
    // The plan is chosen at Bind, under the plan_cache_mode then in force. Outside a transaction
    // the mode is switched only when it differs from the last one set, and left so: the hot
    // statements are generic and follow one another, and a SET is a statement of its own (about
    // a twentieth of a hot statement's cost). Inside one it is set and restored around the
    // statement, so that a rollback, which undoes SETs, leaves the mode as it was. Queries sent
    // to the PGlite past this class (the in-process bus's journal: small lookups by key) run
    // under whichever mode was left.
    const mode = statement.generic ? 'force_generic_plan' : 'auto';
    const switchMode = this.sessionMode !== mode;
    const restoreMode = switchMode && inTransaction && this.sessionMode !== undefined;
    if (switchMode && !inTransaction) this.sessionMode = undefined; // unknown should this fail
    try {
      const { messages } = await this.pg.execProtocol(
        Buffer.concat([
          ...(switchMode ? [serialize.query(`SET plan_cache_mode = ${mode}`)] : []),
          bindMessage(statement.name, values),
          serialize.execute({}),
          serialize.sync(),
          ...(restoreMode ? [serialize.query(`SET plan_cache_mode = ${this.sessionMode}`)] : []),
        ]),
        { syncToFs: false },
      );
      if (switchMode && !inTransaction) this.sessionMode = mode;
      // The columns are not described again at each run (describing the portal cost a finish
      // batch a quarter of its time): the description made at Parse goes where it would have come.
      if (statement.rowDescription)
        messages.splice(
          messages.findIndex((m) => m.name === 'bindComplete'),
          0,
          statement.rowDescription,
        );
      const results = parse.parseResults(messages, this.parsersFor(options), {
        ...options,
        parsers: undefined,
      });
      return results[switchMode ? 1 : 0] as Results<T>;
    } catch (err) {
      throw withQuery(err, sql, params);
    }
  }

  /**
   * PGlite's parsers with the caller's own on top, merged once per caller's set: PGlite merges
   * them at every query (a spread of a parser per Postgres type), and Prisma's adapter passes its
   * own with every query.
   */
  private parsersFor(options: QueryOptions | undefined): PGlite['parsers'] {
    const own = options?.parsers;
    if (!own) return this.pg.parsers;
    let merged = this.mergedParsers.get(own);
    if (!merged || merged.base !== this.pg.parsers) {
      merged = { base: this.pg.parsers, all: { ...this.pg.parsers, ...own } };
      this.mergedParsers.set(own, merged);
    }
    return merged.all;
  }

  private async prepare(sql: string, options: QueryOptions | undefined): Promise<Statement> {
    const cached = this.statements.get(sql);
    if (cached) {
      cached.used = ++this.uses;
      return cached;
    }
    const name = `rp_${++this.sequence}`;
    const { serialize } = protocol;
    let paramTypes: number[];
    let rowDescription: BackendMessage | undefined;
    try {
      const { messages } = await this.pg.execProtocol(
        Buffer.concat([
          serialize.parse({ name, text: sql, types: options?.paramTypes }),
          serialize.describe({ type: 'S', name }),
          serialize.sync(),
        ]),
        { syncToFs: false },
      );
      paramTypes = parse.parseDescribeStatementResults(messages);
      rowDescription = messages.find((m) => m.name === 'rowDescription');
    } catch (err) {
      throw withQuery(err, sql, []);
    }
    const generic = isPlannedOnce(sql);
    const statement = { name, paramTypes, rowDescription, generic, used: ++this.uses };
    if (this.statements.size >= this.capacity) {
      // A scan, but only when a new text arrives with the cache full.
      let oldest: [string, Statement] | undefined;
      for (const entry of this.statements)
        if (!oldest || entry[1].used < oldest[1].used) oldest = entry;
      this.statements.delete(oldest![0]);
      this.closing.push(oldest![1].name);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  private async closeEvicted(): Promise<void> {
    const { serialize } = protocol;
    const names = this.closing.splice(0);
    await this.pg.execProtocol(
      Buffer.concat([
        ...names.map((name) => serialize.close({ type: 'S', name })),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
  }
}

/** As PGlite's own query errors: the statement and its parameters travel with the error. */
function withQuery(err: unknown, query: string, params: unknown[]): unknown {
  if (err && typeof err === 'object' && 'code' in err)
    Object.assign(err, { query, params, queryOptions: undefined });
  return err;
}
