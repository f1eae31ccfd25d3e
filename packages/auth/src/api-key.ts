import { hash, randomBytes } from 'node:crypto';

/**
 * API keys are 256-bit random tokens, so a plain SHA-256 is the right storage hash (as GitHub does
 * for tokens): it is what the vault stores and what crosses the bus; the key itself never does.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex'); // one call, no Hash object per request
}

/** A new key: `rpk_` + 43 base64url characters (256 random bits). */
export function generateApiKey(): string {
  return `rpk_${randomBytes(32).toString('base64url')}`;
}

/**
 * The key a request presents: `Authorization: Bearer <key>` or the bare key (RunPod's docs and its
 * worker SDK send it raw), or `?api_key=` where the route allows it (GraphQL).
 */
export function extractApiKey(
  authorization: string | undefined,
  queryKey?: string,
): string | undefined {
  const header = authorization?.trim();
  if (header)
    return /^bearer(\s|$)/i.test(header)
      ? header.replace(/^bearer/i, '').trim() || undefined
      : header;
  return queryKey?.trim() || undefined;
}
