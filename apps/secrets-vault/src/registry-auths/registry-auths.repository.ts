import { Injectable } from '@nestjs/common';
import type { SealedStore } from '../crypto/sealed-store.js';
import type { SealedValue } from '../crypto/master-keyring.js';
import {
  Prisma,
  PrismaClient,
  type ContainerRegistryAuth as RegistryAuthRow,
} from '../generated/prisma/client.js';

export type { RegistryAuthRow };

export const NAME_TAKEN = 'name-taken' as const;
export const NO_SUCH_USER = 'no-such-user' as const;

const knownError = (err: unknown, code: string) =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === code;

/** Data access of container registry auths; the only code that knows the table (ciphertext only). */
@Injectable()
export class RegistryAuthsRepository implements SealedStore<RegistryAuthRow> {
  constructor(private readonly db: PrismaClient) {}

  async create(
    row: Omit<RegistryAuthRow, 'createdAt' | 'updatedAt'>,
  ): Promise<RegistryAuthRow | typeof NAME_TAKEN | typeof NO_SUCH_USER> {
    try {
      return await this.db.containerRegistryAuth.create({ data: row });
    } catch (err) {
      if (knownError(err, 'P2002')) return NAME_TAKEN;
      if (knownError(err, 'P2003')) return NO_SUCH_USER;
      throw err;
    }
  }

  listOwned(ownerId: string): Promise<RegistryAuthRow[]> {
    return this.db.containerRegistryAuth.findMany({
      where: { ownerId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  findOwned(ownerId: string, id: string): Promise<RegistryAuthRow | null> {
    return this.db.containerRegistryAuth.findFirst({ where: { id, ownerId } });
  }

  /** Replaces the sealed credentials of the owner's auth; null when the owner has none by that id. */
  async reseal(ownerId: string, id: string, sealed: SealedValue): Promise<RegistryAuthRow | null> {
    const { count } = await this.db.containerRegistryAuth.updateMany({
      where: { id, ownerId },
      data: sealed,
    });
    return count === 1 ? this.findOwned(ownerId, id) : null;
  }

  /** True when the owner's auth existed and is now gone. */
  async deleteOwned(ownerId: string, id: string): Promise<boolean> {
    const { count } = await this.db.containerRegistryAuth.deleteMany({ where: { id, ownerId } });
    return count === 1;
  }

  findNotWrappedWith(currentKeyId: string, take: number): Promise<RegistryAuthRow[]> {
    return this.db.containerRegistryAuth.findMany({
      where: { keyId: { not: currentKeyId } },
      take,
      orderBy: { id: 'asc' },
    });
  }

  async rewrap(
    row: RegistryAuthRow,
    to: Pick<RegistryAuthRow, 'wrappedKey' | 'keyId'>,
  ): Promise<boolean> {
    const { count } = await this.db.containerRegistryAuth.updateMany({
      where: { id: row.id, keyId: row.keyId },
      data: to,
    });
    return count === 1;
  }

  readonly what = 'container registry auths';

  aadOf(row: Pick<RegistryAuthRow, 'id' | 'ownerId'>): string {
    return registryAuthAad(row);
  }
}

/** Binds the sealed credentials to their row and owner: moved elsewhere they no longer open. */
export const registryAuthAad = (row: Pick<RegistryAuthRow, 'id' | 'ownerId'>) =>
  `registry-auth:${row.id}:${row.ownerId}`;
