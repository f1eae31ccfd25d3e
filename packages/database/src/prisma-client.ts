import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { EmbeddedDirectSql, PostgresDirectSql, type DirectSql } from './direct-sql.js';
import type { PGliteClient } from './prepared-pglite.js';
import type { DatabaseTarget } from './target.js';

/** The parts of a generated Prisma client this package relies on. */
export interface PrismaClientLike {
  $connect(): Promise<void>;
  $disconnect(): Promise<void>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

export type PrismaClientClass<T extends PrismaClientLike> = new (options: {
  adapter: SqlDriverAdapterFactory;
}) => T;

/** PGlite adapter whose queries are qualified with the service's schema (the stock factory has no option for it). */
class SchemaScopedPGlite extends PrismaPGlite {
  constructor(
    client: PGliteClient,
    private readonly schema: string,
  ) {
    // Prisma's adapter calls only query, exec and transaction.
    super(client as ConstructorParameters<typeof PrismaPGlite>[0]);
  }

  override async connect() {
    const adapter = await super.connect();
    // The adapter reports `options.schema` as its schema name; Prisma qualifies every table with it.
    (adapter as unknown as { options: { schema: string } }).options = { schema: this.schema };
    return adapter;
  }
}

/** A service's Prisma client, and its direct statements on the same connections (DirectSql). */
export interface ServiceDatabase<T> {
  client: T;
  direct: DirectSql;
}

export function createServiceDatabase<T extends PrismaClientLike>(
  Client: PrismaClientClass<T>,
  target: DatabaseTarget,
  poolSize = 10,
): ServiceDatabase<T> {
  if (target.kind === 'embedded') {
    const { client } = target.embedded;
    return {
      client: new Client({ adapter: new SchemaScopedPGlite(client, target.schema) }),
      direct: new EmbeddedDirectSql(client),
    };
  }
  // One pool and one set of statement names for both; the adapter ends the pool when the client
  // disconnects.
  const pool = new pg.Pool({ connectionString: target.url, max: poolSize });
  const names = statementNames();
  const adapter = new PrismaPg(pool, {
    schema: target.schema,
    statementNameGenerator: names,
    disposeExternalPool: true,
  });
  return { client: new Client({ adapter }), direct: new PostgresDirectSql(pool, names) };
}

/**
 * Names under which pg prepares each SQL text once per connection (Prisma's adapter otherwise
 * sends every query unnamed, so Postgres parses and plans the scheduler's multi-CTE transitions
 * on every call). pg keeps a named statement for the connection's life, so only the first
 * `capacity` texts get names (texts vary with the length of `IN (...)` lists); the rest stay
 * unnamed, as before.
 */
export function statementNames(capacity = 1000): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < capacity) {
      name = `rp_${names.size + 1}`;
      names.set(sql, name);
    }
    // pg treats an undefined name as an unnamed statement.
    return name as string;
  };
}
