import { Injectable } from '@nestjs/common';
import type { ApiKeyScope, Principal } from '@runplane/contracts';
import { Prisma, PrismaClient } from '../generated/prisma/client.js';

export const BOOTSTRAP_USER_ID = 'usr_admin';
export const BOOTSTRAP_KEY_ID = 'key_bootstrap';

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: PrismaClient) {}

  async principalFor(keyHash: string): Promise<Principal | null> {
    const key = await this.db.apiKey.findUnique({ where: { keyHash } });
    if (!key || key.revokedAt) return null;
    return {
      userId: key.userId,
      keyId: key.id,
      scope: key.scope as ApiKeyScope,
      endpointId: key.endpointId,
      workerId: key.workerId,
    };
  }

  createUser(user: { id: string; name: string }) {
    return this.db.user.create({ data: user });
  }

  listUsers() {
    return this.db.user.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Stores a key by its hash; false when the user does not exist (any more). */
  async createKey(key: {
    id: string;
    userId: string;
    name: string;
    scope: ApiKeyScope;
    endpointId: string | null;
    keyHash: string;
  }) {
    try {
      return await this.db.apiKey.create({ data: key });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2003') return null;
      throw err;
    }
  }

  /** Live keys, of one user or of everybody; never their hashes. */
  listKeys(userId?: string) {
    return this.db.apiKey.findMany({
      where: { revokedAt: null, ...(userId ? { userId } : {}) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        name: true,
        userId: true,
        scope: true,
        endpointId: true,
        createdAt: true,
      },
    });
  }

  /** A live key (of `userId` when given): its hash and scope, or null. */
  findLiveKey(id: string, userId: string | undefined) {
    return this.db.apiKey.findFirst({
      where: { id, revokedAt: null, ...(userId ? { userId } : {}) },
      select: { keyHash: true, scope: true },
    });
  }

  /** Marks a live key revoked; false when it already was. */
  async revokeKey(id: string, now: Date): Promise<boolean> {
    const { count } = await this.db.apiKey.updateMany({
      where: { id, revokedAt: null },
      data: { revokedAt: now },
    });
    return count === 1;
  }

  /** Deletes the keys of these managed workers; returns their hashes for the cache signal. */
  retireWorkerKeys(workerIds: string[]): Promise<string[]> {
    return this.deleteWorkerKeys({ workerId: { in: workerIds } });
  }

  /** Deletes managed workers' keys minted before `mintedBefore` whose worker is not live. */
  retireWorkerKeysExcept(liveWorkerIds: string[], mintedBefore: Date): Promise<string[]> {
    return this.deleteWorkerKeys({
      workerId: { not: null, notIn: liveWorkerIds },
      createdAt: { lt: mintedBefore },
    });
  }

  private async deleteWorkerKeys(where: Prisma.ApiKeyWhereInput): Promise<string[]> {
    const keys = await this.db.apiKey.findMany({ where, select: { id: true, keyHash: true } });
    if (!keys.length) return [];
    await this.db.apiKey.deleteMany({ where: { id: { in: keys.map((k) => k.id) } } });
    return keys.map((k) => k.keyHash);
  }

  async userExists(userId: string): Promise<boolean> {
    return (await this.db.user.count({ where: { id: userId } })) === 1;
  }

  /** Stores a worker key (by hash) for one endpoint of the user; false when the user does not exist. */
  async createWorkerKey(key: {
    id: string;
    userId: string;
    endpointId: string;
    workerId: string;
    keyHash: string;
  }): Promise<boolean> {
    try {
      await this.db.apiKey.create({
        data: { ...key, name: `key of worker ${key.workerId}`, scope: 'worker' },
      });
      return true;
    } catch (err) {
      // The user was removed between the caller's check and this insert: its foreign key fails.
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2003') return false;
      throw err;
    }
  }

  async ensureBootstrapUser(): Promise<void> {
    await this.db.user.upsert({
      where: { id: BOOTSTRAP_USER_ID },
      create: { id: BOOTSTRAP_USER_ID, name: 'admin' },
      update: {},
    });
  }

  /** Sets the bootstrap admin key's hash (a changed RUNPLANE_API_KEY replaces the old key). */
  async setBootstrapKey(keyHash: string): Promise<void> {
    await this.db.apiKey.upsert({
      where: { id: BOOTSTRAP_KEY_ID },
      create: {
        id: BOOTSTRAP_KEY_ID,
        userId: BOOTSTRAP_USER_ID,
        name: 'bootstrap admin key',
        keyHash,
        scope: 'admin',
      },
      update: { keyHash, revokedAt: null },
    });
  }

  /** Creates the bootstrap key only if no admin key exists yet; true when this call created it. */
  async createBootstrapKeyIfNoAdmin(keyHash: string): Promise<boolean> {
    if (await this.db.apiKey.count({ where: { scope: 'admin', revokedAt: null } })) return false;
    const { count } = await this.db.apiKey.createMany({
      data: [
        {
          id: BOOTSTRAP_KEY_ID,
          userId: BOOTSTRAP_USER_ID,
          name: 'bootstrap admin key',
          keyHash,
          scope: 'admin',
        },
      ],
      skipDuplicates: true,
    });
    return count === 1;
  }
}
