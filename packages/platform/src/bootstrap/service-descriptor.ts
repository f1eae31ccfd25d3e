import type { DynamicModule, Type } from '@nestjs/common';
import type { ServiceName } from '@runplane/contracts';

/** What a service app exports so the launcher can run it alone or together with the others. */
export interface ServiceDescriptor {
  name: ServiceName;
  /** The service's root Nest module (controllers → services → repositories). */
  module: Type<unknown> | DynamicModule;
  /** Port when the service runs alone in cluster mode (PORT overrides it). */
  defaultPort: number;
  /** Absolute path of the service's `prisma/migrations`. */
  migrationsDir: string;
  /** What the service adds to the OpenAPI document besides its controllers' routes (docs/architecture.md, "API reference"). */
  openApi?: ServiceApiDocs;
}

/** OpenAPI 3.1 objects, written by hand only for what no controller declares. */
export interface ServiceApiDocs {
  /** Tags of its routes, in the order the document lists them. */
  tags?: Array<{ name: string; description: string }>;
  /** Routes served outside Nest controllers (GraphQL): path → path item. */
  paths?: Record<string, object>;
  /** Calls the service makes to users' URLs (OpenAPI `webhooks`). */
  webhooks?: Record<string, object>;
}

/** Tokens of process-wide values provided to every module. */
export const LOGGER = Symbol('runplane:logger');
