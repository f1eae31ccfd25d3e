import { Type } from 'class-transformer';
import { IsArray, IsNotEmpty, IsObject, IsString, Matches, ValidateNested } from 'class-validator';
import type { Principal } from '../auth/principal.js';
import {
  ContainerRegistryAuthCreateDto,
  ContainerRegistryCredentialsDto,
  type ContainerRegistryAuth,
} from '../secrets/registry-auth.dto.js';
import { SecretCreateDto, type Secret } from '../secrets/secret.dto.js';
import { IsStringMap } from '../templates/template.dto.js';
import { defineRpc, defineSignal } from './definitions.js';
import { OwnedRequest, type Ack } from './scheduler.js';

export class VerifyApiKeyRequest {
  /** Lowercase hex SHA-256 of the presented key: the key itself never crosses the bus. */
  @IsString() @Matches(/^[0-9a-f]{64}$/) keyHash!: string;
}

export interface VerifyApiKeyResponse {
  principal: Principal | null;
}

/**
 * A key for one managed worker (its RUNPOD_AI_API_KEY): it may use only `endpointId`'s worker
 * routes, only as `workerId`, and dies with the worker (`retireWorkerKeys`).
 */
export class MintWorkerKeyRequest {
  @IsString() @IsNotEmpty() userId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
  @IsString() @IsNotEmpty() workerId!: string;
}

/** Workers that ended: their keys are deleted and dropped from every instance's cache. */
export class RetireWorkerKeysRequest {
  @IsArray() @IsString({ each: true }) workerIds!: string[];
}

/**
 * Reconciliation: every managed worker's key minted before `mintedBefore` whose worker is not in
 * `liveWorkerIds` is retired (catches a retirement that was lost while the vault was down).
 */
export class KeepWorkerKeysRequest {
  @IsArray() @IsString({ each: true }) liveWorkerIds!: string[];
  @IsString() @IsNotEmpty() mintedBefore!: string;
}

export interface RetiredWorkerKeys {
  retired: number;
}

export interface MintWorkerKeyResponse {
  keyId: string;
  /** Shown only here; the vault keeps its hash. */
  key: string;
}

export class ApiKeyRevokedSignal {
  @IsString() @IsNotEmpty() keyHash!: string;
}

export class CreateSecretRequest extends OwnedRequest {
  @IsObject() @ValidateNested() @Type(() => SecretCreateDto) secret!: SecretCreateDto;
}

export class SecretScopedRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() secretId!: string;
}

/** A template env (as written) whose `{{ RUNPOD_SECRET_<name> }}` references the vault fills in. */
export class ResolveSecretsRequest extends OwnedRequest {
  @IsObject() @IsStringMap() env!: Record<string, string>;
}

export interface ResolveSecretsResponse {
  /** The same env with every reference replaced by the owner's secret value. */
  env: Record<string, string>;
}

export class CreateRegistryAuthRequest extends OwnedRequest {
  @IsObject()
  @ValidateNested()
  @Type(() => ContainerRegistryAuthCreateDto)
  auth!: ContainerRegistryAuthCreateDto;
}

export class RegistryAuthScopedRequest extends OwnedRequest {
  @IsString() @IsNotEmpty() registryAuthId!: string;
}

export class UpdateRegistryAuthRequest extends RegistryAuthScopedRequest {
  @IsObject()
  @ValidateNested()
  @Type(() => ContainerRegistryCredentialsDto)
  credentials!: ContainerRegistryCredentialsDto;
}

/** A user's registry credentials in the clear: only for the pull of a workload's image. */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** Request/reply operations answered by secrets-vault, which owns users, API keys and secrets. */
export const VaultRpc = {
  verifyApiKey: defineRpc<VerifyApiKeyRequest, VerifyApiKeyResponse>(
    'secrets-vault',
    'apikeys.verify',
    VerifyApiKeyRequest,
  ),
  mintWorkerKey: defineRpc<MintWorkerKeyRequest, MintWorkerKeyResponse>(
    'secrets-vault',
    'apikeys.mint-worker',
    MintWorkerKeyRequest,
  ),
  retireWorkerKeys: defineRpc<RetireWorkerKeysRequest, RetiredWorkerKeys>(
    'secrets-vault',
    'apikeys.retire-worker-keys',
    RetireWorkerKeysRequest,
  ),
  keepWorkerKeys: defineRpc<KeepWorkerKeysRequest, RetiredWorkerKeys>(
    'secrets-vault',
    'apikeys.keep-worker-keys',
    KeepWorkerKeysRequest,
  ),
  /** Name taken by the owner: 409. The value is stored encrypted and never returned. */
  createSecret: defineRpc<CreateSecretRequest, Secret>(
    'secrets-vault',
    'secrets.create',
    CreateSecretRequest,
  ),
  listSecrets: defineRpc<OwnedRequest, Secret[]>('secrets-vault', 'secrets.list', OwnedRequest),
  deleteSecret: defineRpc<SecretScopedRequest, Ack>(
    'secrets-vault',
    'secrets.delete',
    SecretScopedRequest,
  ),
  /**
   * For the compute path only (pod-rest, when a worker or Pod starts): the env with its secret
   * references resolved. A reference to a secret the owner does not have is 400 SECRET_NOT_FOUND.
   */
  resolveSecrets: defineRpc<ResolveSecretsRequest, ResolveSecretsResponse>(
    'secrets-vault',
    'secrets.resolve',
    ResolveSecretsRequest,
  ),
  /** Container registry auths (GraphQL saveRegistryAuth & co.); name taken by the owner: 409. */
  createRegistryAuth: defineRpc<CreateRegistryAuthRequest, ContainerRegistryAuth>(
    'secrets-vault',
    'registry-auths.create',
    CreateRegistryAuthRequest,
  ),
  listRegistryAuths: defineRpc<OwnedRequest, ContainerRegistryAuth[]>(
    'secrets-vault',
    'registry-auths.list',
    OwnedRequest,
  ),
  updateRegistryAuth: defineRpc<UpdateRegistryAuthRequest, ContainerRegistryAuth>(
    'secrets-vault',
    'registry-auths.update',
    UpdateRegistryAuthRequest,
  ),
  /**
   * For the compute path only (pod-rest's docker provider, when it pulls a workload's private
   * image): the owner's credentials, opened. Never behind an HTTP or GraphQL route. Unknown or
   * another user's: 404 REGISTRY_AUTH_NOT_FOUND.
   */
  resolveRegistryAuth: defineRpc<RegistryAuthScopedRequest, RegistryCredentials>(
    'secrets-vault',
    'registry-auths.resolve',
    RegistryAuthScopedRequest,
  ),
  /** Unknown or another user's: 404 REGISTRY_AUTH_NOT_FOUND. */
  deleteRegistryAuth: defineRpc<RegistryAuthScopedRequest, Ack>(
    'secrets-vault',
    'registry-auths.delete',
    RegistryAuthScopedRequest,
  ),
} as const;

export const VaultSignals = {
  /** Sent when a key is revoked so every instance drops it from its cache at once. */
  apiKeyRevoked: defineSignal<ApiKeyRevokedSignal>('apikeys.revoked'),
} as const;
