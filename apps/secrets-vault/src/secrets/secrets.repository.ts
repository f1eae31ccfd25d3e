import { Injectable } from '@nestjs/common';
import type { SealedStore } from '../crypto/sealed-store.js';
import { Prisma, PrismaClient, type Secret as SecretRow } from '../generated/prisma/client.js';

export type { SecretRow };

export const NAME_TAKEN = 'name-taken' as const;
export const NO_SUCH_USER = 'no-such-user' as const;

const knownError = (err: unknown, code: string) =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === code;

/** Data access of secrets; the only code that knows the table (which holds ciphertext only). */
@Injectable()
export class SecretsRepository implements SealedStore<SecretRow> {
  constructor(private readonly db: PrismaClient) {}

  async create(
    row: Omit<SecretRow, 'createdAt' | 'updatedAt'>,
  ): Promise<SecretRow | typeof NAME_TAKEN | typeof NO_SUCH_USER> {
    try {
      return await this.db.secret.create({ data: row });
    } catch (err) {
      if (knownError(err, 'P2002')) return NAME_TAKEN;
      if (knownError(err, 'P2003')) return NO_SUCH_USER;
      throw err;
    }
  }

  listOwned(ownerId: string): Promise<SecretRow[]> {
    return this.db.secret.findMany({
      where: { ownerId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  findByNames(ownerId: string, names: string[]): Promise<SecretRow[]> {
    return this.db.secret.findMany({ where: { ownerId, name: { in: names } } });
  }

  /** True when the owner's secret existed and is now gone. */
  async deleteOwned(ownerId: string, id: string): Promise<boolean> {
    const { count } = await this.db.secret.deleteMany({ where: { id, ownerId } });
    return count === 1;
  }

  /** Rows sealed with another master key than `currentKeyId` (after a rotation), a batch at a time. */
  findNotWrappedWith(currentKeyId: string, take: number): Promise<SecretRow[]> {
    return this.db.secret.findMany({
      where: { keyId: { not: currentKeyId } },
      take,
      orderBy: { id: 'asc' },
    });
  }

  /** Swaps the wrapped data key, only if nobody re-wrapped the row meanwhile (replicas may race). */
  async rewrap(row: SecretRow, to: Pick<SecretRow, 'wrappedKey' | 'keyId'>): Promise<boolean> {
    const { count } = await this.db.secret.updateMany({
      where: { id: row.id, keyId: row.keyId },
      data: to,
    });
    return count === 1;
  }

  readonly what = 'secrets';

  aadOf(row: Pick<SecretRow, 'id' | 'ownerId'>): string {
    return secretAad(row);
  }
}

/** Binds a secret's ciphertext to its row and owner: moved elsewhere it no longer opens. */
export const secretAad = (row: Pick<SecretRow, 'id' | 'ownerId'>) =>
  `secret:${row.id}:${row.ownerId}`;
