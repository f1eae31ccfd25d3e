import { Injectable } from '@nestjs/common';
import { RunplaneError, type UserSettings } from '@runplane/contracts';
import { UsersRepository } from './users.repository.js';

type Row = {
  id: string;
  name: string;
  pubKey: string;
  createdAt: Date;
  _count: { apiKeys: number };
};

/** A user's own settings (GraphQL `myself`, `updateUserSettings`); users themselves are created by admins. */
@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  async get(userId: string): Promise<UserSettings> {
    return view((await this.users.find(userId)) ?? notFound(userId));
  }

  /** Stored as sent: RunPod's clients keep one key per line (runpodctl separates them by blank lines). */
  async setPubKey(userId: string, pubKey: string): Promise<UserSettings> {
    return view((await this.users.setPubKey(userId, pubKey)) ?? notFound(userId));
  }
}

function view(row: Row): UserSettings {
  return {
    id: row.id,
    name: row.name,
    pubKey: row.pubKey,
    createdAt: row.createdAt.toISOString(),
    isAdmin: row._count.apiKeys > 0,
  };
}

function notFound(userId: string): never {
  throw RunplaneError.notFound(`user ${userId} not found`, 'USER_NOT_FOUND');
}
