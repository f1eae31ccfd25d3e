import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { PGlite } from '@electric-sql/pglite';
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
    client: PGlite,
    private readonly schema: string,
  ) {
    super(client);
  }

  override async connect() {
    const adapter = await super.connect();
    // The adapter reports `options.schema` as its schema name; Prisma qualifies every table with it.
    (adapter as unknown as { options: { schema: string } }).options = { schema: this.schema };
    return adapter;
  }
}

export function createAdapterFactory(
  target: DatabaseTarget,
  poolSize = 10,
): SqlDriverAdapterFactory {
  if (target.kind === 'embedded')
    return new SchemaScopedPGlite(target.embedded.pglite, target.schema);
  return new PrismaPg({ connectionString: target.url, max: poolSize }, { schema: target.schema });
}

export function createPrismaClient<T extends PrismaClientLike>(
  Client: PrismaClientClass<T>,
  target: DatabaseTarget,
): T {
  return new Client({ adapter: createAdapterFactory(target) });
}
