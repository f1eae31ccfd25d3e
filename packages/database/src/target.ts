import type { ServiceName } from '@runplane/contracts';
import type { EmbeddedPostgres } from './embedded-postgres.js';

/**
 * Where one service's data lives. Every service keeps its tables in a Postgres schema named after
 * itself (`queue_api`, `scheduler`, ...): in its own database in cluster mode, in the shared
 * embedded database in standalone mode. Nothing collides even if an operator points several
 * services at one database.
 */
export type DatabaseTarget =
  | { kind: 'postgres'; service: ServiceName; url: string; schema: string }
  | { kind: 'embedded'; service: ServiceName; embedded: EmbeddedPostgres; schema: string };

export function schemaNameFor(service: ServiceName): string {
  return service.replace(/-/g, '_');
}

/**
 * The target of a service in cluster mode: `DATABASE_URL_<SERVICE>` (e.g. DATABASE_URL_QUEUE_API)
 * or `DATABASE_URL`; a `schema` query parameter overrides the schema name.
 */
export function postgresTarget(service: ServiceName, rawUrl: string): DatabaseTarget {
  const url = new URL(rawUrl);
  const schema = url.searchParams.get('schema') ?? schemaNameFor(service);
  url.searchParams.delete('schema');
  return { kind: 'postgres', service, url: url.toString(), schema };
}

export function embeddedTarget(service: ServiceName, embedded: EmbeddedPostgres): DatabaseTarget {
  return { kind: 'embedded', service, embedded, schema: schemaNameFor(service) };
}

/** Env variable holding one service's database URL in cluster mode. */
export function databaseUrlVariable(service: ServiceName): string {
  return `DATABASE_URL_${service.replace(/-/g, '_').toUpperCase()}`;
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'embedded') return `embedded postgres, schema "${target.schema}"`;
  const u = new URL(target.url);
  return `postgres ${u.host}${u.pathname}, schema "${target.schema}"`;
}
