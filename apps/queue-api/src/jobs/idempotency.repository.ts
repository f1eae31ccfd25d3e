import { Injectable } from '@nestjs/common';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';

export interface IdempotencyScope {
  ownerId: string;
  endpointId: string;
  key: string;
}

export interface Claim {
  jobId: string;
  /** True when this call created the key (it must submit); false when the key was already taken. */
  created: boolean;
}

/** Idempotency-Key rows of /run and /runsync; the only code that knows the table. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: PrismaClient) {}

  /**
   * Binds the key to `jobId` unless it is bound already and not expired. Concurrent claims of one
   * key are decided by the primary key: exactly one of them creates the row, the others read it.
   */
  async claim(scope: IdempotencyScope, jobId: string, now: Date, ttlMs: number): Promise<Claim> {
    const expiresAt = new Date(now.getTime() + ttlMs);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.db.idempotencyKey.create({
          data: { ...scope, jobId, createdAt: now, expiresAt },
        });
        return { jobId, created: true };
      } catch (err) {
        if (!(err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002'))
          throw err;
      }
      const existing = await this.db.idempotencyKey.findUnique({
        where: { ownerId_endpointId_key: scope },
      });
      if (existing && existing.expiresAt > now) return { jobId: existing.jobId, created: false };
      if (existing) {
        // Expired: take it over, unless a concurrent request just did (then read theirs next round).
        const taken = await this.db.idempotencyKey.updateMany({
          where: { ...scope, expiresAt: { lte: now } },
          data: { jobId, createdAt: now, expiresAt },
        });
        if (taken.count === 1) return { jobId, created: true };
      }
    }
    throw new Error('idempotency key contended; giving up');
  }

  /** Unbinds the key from `jobId` (its submission was rejected, so no job exists). */
  async release(scope: IdempotencyScope, jobId: string): Promise<void> {
    await this.db.idempotencyKey.deleteMany({ where: { ...scope, jobId } });
  }

  async deleteExpired(now: Date): Promise<number> {
    const { count } = await this.db.idempotencyKey.deleteMany({
      where: { expiresAt: { lte: now } },
    });
    return count;
  }
}
