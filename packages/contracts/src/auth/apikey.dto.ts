import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from './principal.js';

/** `POST /v1/users` (admin only). */
export class CreateUserDto {
  @IsString() @IsNotEmpty() @MaxLength(191) name!: string;
}

export interface User {
  id: string;
  name: string;
  createdAt: string;
}

/**
 * `POST /v1/apikeys`. `userId` defaults to the caller's user; only an admin may name
 * another user. A non-admin caller may not create a key wider than its own. `worker` keys need the
 * `endpointId` whose worker routes they serve (an endpoint of that user).
 */
export class CreateApiKeyDto {
  @IsString() @IsNotEmpty() @MaxLength(191) name!: string;
  @IsOptional() @IsString() @IsNotEmpty() userId?: string;
  @IsIn(API_KEY_SCOPES) scope!: ApiKeyScope;
  @ValidateIf((o: CreateApiKeyDto) => o.scope === 'worker' || o.endpointId !== undefined)
  @IsString()
  @IsNotEmpty()
  endpointId?: string;
}

/** A key as listed: never its value. */
export interface ApiKeyView {
  id: string;
  name: string;
  userId: string;
  scope: ApiKeyScope;
  endpointId: string | null;
  createdAt: string;
}

/** The answer to a key creation: the only time the key's value is shown. */
export interface CreatedApiKey extends ApiKeyView {
  key: string;
}

/** How wide a scope is, for "no wider than its own": admin > readwrite > readonly > worker. */
export const SCOPE_RANK: Readonly<Record<ApiKeyScope, number>> = {
  admin: 3,
  readwrite: 2,
  readonly: 1,
  worker: 0,
};
