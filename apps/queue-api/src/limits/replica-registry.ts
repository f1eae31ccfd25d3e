import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LOGGER, type Logger } from '@runplane/platform';
import { randomUUID } from 'node:crypto';
import { PrismaClient } from '../generated/prisma/client.js';

/**
 * How many queue-api replicas are alive, from a heartbeat row each in queue-api's database.
 * Concurrency limits are split among them (each replica enforces its share of in-flight requests;
 * docs/limits.md), so the count only has to be right within a heartbeat or two.
 */
@Injectable()
export class ReplicaRegistry implements OnApplicationBootstrap, OnApplicationShutdown {
  static readonly HEARTBEAT_MS = 5000;
  /** A replica silent this long is gone (crashed or scaled down). */
  static readonly EXPIRY_MS = 15_000;

  readonly id = `qa_${randomUUID()}`;
  private live = 1;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: PrismaClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Live replicas, this one included (at least 1). */
  get count(): number {
    return this.live;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), ReplicaRegistry.HEARTBEAT_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    // Leaving at once hands this replica's share to the others without waiting for the expiry.
    await this.db.apiReplica.deleteMany({ where: { id: this.id } }).catch(() => {});
  }

  private async beat(): Promise<void> {
    const now = new Date();
    try {
      await this.db.apiReplica.upsert({
        where: { id: this.id },
        create: { id: this.id, seenAt: now },
        update: { seenAt: now },
      });
      const since = new Date(now.getTime() - ReplicaRegistry.EXPIRY_MS);
      this.live = Math.max(1, await this.db.apiReplica.count({ where: { seenAt: { gt: since } } }));
      await this.db.apiReplica.deleteMany({
        where: { seenAt: { lt: new Date(now.getTime() - 10 * ReplicaRegistry.EXPIRY_MS) } },
      });
    } catch (err) {
      // Keep the last count: a database hiccup must not change the limits.
      this.logger.warn({ err }, 'replica heartbeat failed; keeping the last replica count');
    }
  }
}
