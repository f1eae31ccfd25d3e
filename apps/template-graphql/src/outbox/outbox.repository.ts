import { Injectable } from '@nestjs/common';
import { PrismaClient, type OutboxEvent } from '../generated/prisma/client.js';

export type OutboxRow = OutboxEvent;

/** Data access of the outbox table (rows are written by the repositories whose changes they announce). */
@Injectable()
export class OutboxRepository {
  constructor(private readonly db: PrismaClient) {}

  /**
   * Leases up to `limit` unclaimed (or lease-expired) events to this relay until `leaseUntil`.
   * The conditional UPDATE is what decides between two relays racing for the same row: Postgres
   * re-checks the lease condition on the locked row, so only one of them gets it back.
   */
  async claim(limit: number, now: Date, leaseUntil: Date): Promise<OutboxRow[]> {
    const free = { OR: [{ claimedUntil: null }, { claimedUntil: { lt: now } }] };
    const candidates = await this.db.outboxEvent.findMany({ where: free, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit, select: { id: true } });
    if (!candidates.length) return [];
    const claimed = await this.db.outboxEvent.updateManyAndReturn({
      where: { id: { in: candidates.map((c) => c.id) }, ...free },
      data: { claimedUntil: leaseUntil, attempts: { increment: 1 } },
    });
    return claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  async remove(id: string): Promise<void> {
    await this.db.outboxEvent.deleteMany({ where: { id } });
  }

  count(): Promise<number> {
    return this.db.outboxEvent.count();
  }
}
