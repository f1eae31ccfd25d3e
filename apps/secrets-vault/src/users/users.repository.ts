import { Injectable } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client.js';

const SETTINGS = {
  id: true,
  name: true,
  pubKey: true,
  createdAt: true,
  _count: { select: { apiKeys: { where: { scope: 'admin', revokedAt: null } } } },
} as const;

@Injectable()
export class UsersRepository {
  constructor(private readonly db: PrismaClient) {}

  find(userId: string) {
    return this.db.user.findUnique({ where: { id: userId }, select: SETTINGS });
  }

  /** null when the user does not exist. */
  async setPubKey(userId: string, pubKey: string) {
    const { count } = await this.db.user.updateMany({ where: { id: userId }, data: { pubKey } });
    return count ? this.find(userId) : null;
  }
}
