import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { generateApiKey, hashApiKey } from '@runplane/auth';
import {
  RunplaneError,
  SchedulerRpc,
  SCOPE_RANK,
  VaultSignals,
  type ApiKeyScope,
  type ApiKeyView,
  type CreateApiKeyDto,
  type CreatedApiKey,
  type CreateUserDto,
  type Principal,
  type User,
} from '@runplane/contracts';
import { randomUUID } from 'node:crypto';
import { ApiKeysRepository, BOOTSTRAP_KEY_ID } from './apikeys.repository.js';

const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/**
 * Users and their API keys as the admin REST routes manage them. Keys are shown once
 * and stored as SHA-256 hashes; a revocation is signalled to every instance's key cache at once
 * (and their cache TTL bounds it anyway, contract: effective within 5 s).
 */
@Injectable()
export class ApiUsersService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly bus: Bus,
  ) {}

  async createUser(dto: CreateUserDto): Promise<User> {
    return toUser(await this.keys.createUser({ id: newId('usr'), name: dto.name }));
  }

  async listUsers(): Promise<User[]> {
    return (await this.keys.listUsers()).map(toUser);
  }

  async createKey(caller: Principal, dto: CreateApiKeyDto): Promise<CreatedApiKey> {
    const isAdmin = caller.scope === 'admin';
    const userId = dto.userId ?? caller.userId;
    // Another user's existence is not revealed to non-admins.
    if (!isAdmin && userId !== caller.userId)
      throw RunplaneError.notFound(`user ${userId} not found`, 'USER_NOT_FOUND');
    assertNoWider(caller, dto.scope, 'create');
    if (dto.scope !== 'worker' && dto.endpointId !== undefined) {
      throw RunplaneError.badRequest('endpointId is only for worker keys', [
        { path: 'endpointId', message: 'only allowed with scope "worker"' },
      ]);
    }
    if (dto.scope === 'worker') {
      // The endpoint must be one of that user's (404 otherwise, as for any foreign resource).
      await this.bus.request(SchedulerRpc.getEndpoint, {
        ownerId: userId,
        endpointId: dto.endpointId!,
      });
    }
    const key = generateApiKey();
    const row = await this.keys.createKey({
      id: newId('key'),
      userId,
      name: dto.name,
      scope: dto.scope,
      endpointId: dto.endpointId ?? null,
      keyHash: hashApiKey(key),
    });
    if (!row) throw RunplaneError.notFound(`user ${userId} not found`, 'USER_NOT_FOUND');
    return { ...toKeyView(row), key };
  }

  /** An admin sees every user's keys (or one user's with `userId`); anybody else only their own. */
  async listKeys(caller: Principal, userId?: string): Promise<ApiKeyView[]> {
    const scope = caller.scope === 'admin' ? userId : caller.userId;
    return (await this.keys.listKeys(scope)).map(toKeyView);
  }

  /** The caller's own key: its scope tells a client what it may offer. */
  async currentKey(caller: Principal): Promise<ApiKeyView> {
    const own = (await this.keys.listKeys(caller.userId)).find((k) => k.id === caller.keyId);
    if (!own)
      throw RunplaneError.notFound(`API key ${caller.keyId} not found`, 'API_KEY_NOT_FOUND');
    return toKeyView(own);
  }

  async revokeKey(caller: Principal, keyId: string): Promise<void> {
    if (keyId === caller.keyId)
      throw RunplaneError.conflict('a key cannot revoke itself; use another key', 'KEY_IS_CALLER');
    if (keyId === BOOTSTRAP_KEY_ID) {
      throw RunplaneError.conflict(
        'the bootstrap admin key is managed by RUNPLANE_API_KEY and cannot be revoked here',
        'BOOTSTRAP_KEY',
      );
    }
    const key = await this.keys.findLiveKey(
      keyId,
      caller.scope === 'admin' ? undefined : caller.userId,
    );
    if (!key) throw RunplaneError.notFound(`API key ${keyId} not found`, 'API_KEY_NOT_FOUND');
    assertNoWider(caller, key.scope as ApiKeyScope, 'revoke');
    if (!(await this.keys.revokeKey(keyId, new Date())))
      throw RunplaneError.notFound(`API key ${keyId} not found`, 'API_KEY_NOT_FOUND');
    await this.bus.signal(VaultSignals.apiKeyRevoked, { keyHash: key.keyHash });
  }
}

/**
 * A key acts only on keys no wider than itself: otherwise a readwrite key could mint, or remove,
 * the admin keys of its user. Refused like any scope shortfall (401).
 */
function assertNoWider(caller: Principal, scope: ApiKeyScope, verb: 'create' | 'revoke'): void {
  if (SCOPE_RANK[scope] > SCOPE_RANK[caller.scope]) {
    throw RunplaneError.unauthorized(
      `a key with scope ${caller.scope} cannot ${verb} a key with the wider scope ${scope}`,
    );
  }
}

function toUser(row: { id: string; name: string; createdAt: Date }): User {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

function toKeyView(row: {
  id: string;
  name: string;
  userId: string;
  scope: string;
  endpointId: string | null;
  createdAt: Date;
}): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    userId: row.userId,
    scope: row.scope as ApiKeyView['scope'],
    endpointId: row.endpointId,
    createdAt: row.createdAt.toISOString(),
  };
}
