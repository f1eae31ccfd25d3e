import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ServiceName } from '@runplane/contracts';
import { applyMigrations, type MigrationLog } from './migrate.js';
import { DirectSql } from './direct-sql.js';
import {
  createServiceDatabase,
  type PrismaClientClass,
  type PrismaClientLike,
  type ServiceDatabase,
} from './prisma-client.js';
import { openSqlSession } from './sql-session.js';
import { describeTarget, type DatabaseTarget } from './target.js';

/**
 * Where each service's data lives in this process, chosen once at start by the run mode (embedded
 * schema per service in standalone, DATABASE_URL per service in cluster). Provided globally by the
 * platform bootstrap; also tracks the open clients for /readyz.
 */
@Injectable()
export class DatabaseTargets {
  private readonly clients = new Map<string, PrismaClientLike>();

  constructor(
    private readonly resolve: (service: ServiceName) => DatabaseTarget,
    readonly migrateOnStart: boolean,
    readonly log?: MigrationLog,
  ) {}

  targetFor(service: ServiceName): DatabaseTarget {
    return this.resolve(service);
  }

  track(service: string, client: PrismaClientLike): void {
    this.clients.set(service, client);
  }

  /** Checks every open database with `SELECT 1`; returns the names of those that failed. */
  async unreachable(timeoutMs = 2000): Promise<string[]> {
    const failed: string[] = [];
    await Promise.all(
      [...this.clients].map(async ([service, client]) => {
        const ok = await Promise.race([
          client.$queryRawUnsafe('SELECT 1').then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref()),
        ]);
        if (!ok) failed.push(service);
      }),
    );
    return failed;
  }
}

export interface ServiceDatabaseOptions<T extends PrismaClientLike> {
  service: ServiceName;
  /** The service's generated PrismaClient class; it is also the injection token. */
  client: PrismaClientClass<T>;
  /** Absolute path of the service's `prisma/migrations`. */
  migrationsDir: string;
}

@Module({})
export class DatabaseModule {
  /**
   * Gives a service its own Prisma client, migrated (when enabled) and connected before the app
   * starts, and `DirectSql` on the same connections.
   */
  static forService<T extends PrismaClientLike>(options: ServiceDatabaseOptions<T>): DynamicModule {
    const token = options.client;

    @Injectable()
    class DisconnectOnShutdown implements OnApplicationShutdown {
      constructor(
        @Inject(token) private readonly client: T,
        private readonly direct: DirectSql,
      ) {}
      async onApplicationShutdown(): Promise<void> {
        await Promise.all([this.client.$disconnect(), this.direct.close()]);
      }
    }

    const DATABASE = Symbol(`${options.service} database`);
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DATABASE,
          inject: [DatabaseTargets],
          useFactory: async (targets: DatabaseTargets): Promise<ServiceDatabase<T>> => {
            const target = targets.targetFor(options.service);
            if (targets.migrateOnStart)
              await migrateTarget(target, options.migrationsDir, targets.log);
            const database = createServiceDatabase(options.client, target);
            await database.client.$connect();
            targets.track(options.service, database.client);
            return database;
          },
        },
        { provide: token, inject: [DATABASE], useFactory: (db: ServiceDatabase<T>) => db.client },
        {
          provide: DirectSql,
          inject: [DATABASE],
          useFactory: (db: ServiceDatabase<T>) => db.direct,
        },
        DisconnectOnShutdown,
      ],
      exports: [token, DirectSql],
    };
  }
}

/** Applies a service's migrations to its target (used at start-up and by `runplane migrate`). */
export async function migrateTarget(
  target: DatabaseTarget,
  migrationsDir: string,
  log?: MigrationLog,
) {
  const session = await openSqlSession(target);
  try {
    const result = await applyMigrations(session, target.schema, migrationsDir, log);
    log?.info(
      `${target.service}: ${describeTarget(target)} is up to date (${result.applied.length} applied, ${result.alreadyApplied} already applied)`,
    );
    return result;
  } finally {
    await session.close();
  }
}
