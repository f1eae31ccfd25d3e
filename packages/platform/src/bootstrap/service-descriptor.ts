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
}

/** Tokens of process-wide values provided to every module. */
export const LOGGER = Symbol('runplane:logger');
