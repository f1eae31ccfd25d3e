import { IsNotEmpty, IsString, Matches } from 'class-validator';
import type { Principal } from '../auth/principal.js';
import { defineRpc, defineSignal } from './definitions.js';

export class VerifyApiKeyRequest {
  /** Lowercase hex SHA-256 of the presented key: the key itself never crosses the bus. */
  @IsString() @Matches(/^[0-9a-f]{64}$/) keyHash!: string;
}

export interface VerifyApiKeyResponse {
  principal: Principal | null;
}

/** A key for one endpoint's worker routes (RUNPOD_AI_API_KEY of a managed worker). */
export class MintWorkerKeyRequest {
  @IsString() @IsNotEmpty() userId!: string;
  @IsString() @IsNotEmpty() endpointId!: string;
}

export interface MintWorkerKeyResponse {
  keyId: string;
  /** Shown only here; the vault keeps its hash. */
  key: string;
}

export class ApiKeyRevokedSignal {
  @IsString() @IsNotEmpty() keyHash!: string;
}

/** Request/reply operations answered by secrets-vault, which owns users, API keys and secrets. */
export const VaultRpc = {
  verifyApiKey: defineRpc<VerifyApiKeyRequest, VerifyApiKeyResponse>('secrets-vault', 'apikeys.verify', VerifyApiKeyRequest),
  mintWorkerKey: defineRpc<MintWorkerKeyRequest, MintWorkerKeyResponse>('secrets-vault', 'apikeys.mint-worker', MintWorkerKeyRequest),
} as const;

export const VaultSignals = {
  /** Sent when a key is revoked so every instance drops it from its cache at once. */
  apiKeyRevoked: defineSignal<ApiKeyRevokedSignal>('apikeys.revoked'),
} as const;
