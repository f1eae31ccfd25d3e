/** Scopes of an API key. Ordered from widest to narrowest. */
export const API_KEY_SCOPES = ['admin', 'readwrite', 'readonly', 'worker'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Who is calling: resolved from an API key by the vault and passed to services with every request. */
export interface Principal {
  userId: string;
  keyId: string;
  scope: ApiKeyScope;
  /** Set for `worker` keys: the only endpoint whose worker routes the key may use. */
  endpointId?: string | null;
  /** Set for the key of a managed worker: the only worker id it may act as (it dies with it). */
  workerId?: string | null;
}
