import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import {
  ApiKeyVerifier,
  AuthThrottle,
  extractApiKey,
  isAllowed,
  type Refusal,
} from '@runplane/auth';
import type { Principal } from '@runplane/contracts';
import { GraphQLError } from 'graphql';

/** What every resolver gets in its context: the caller, resolved from its API key. */
export interface GraphqlContext {
  principal: Principal;
}

interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
  query?: unknown;
  url: string;
  ip: string;
}

/**
 * A GraphQL error answered with HTTP 401 (as on RunPod: missing, wrong or under-privileged keys yield 401;
 * Runplane's error body `{"errors": [{"message", "extensions": {"code"}}]}`).
 */
function unauthorized(message: string, code: 'UNAUTHENTICATED' | 'FORBIDDEN'): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status: 401 } } });
}

/** A 429 of the authentication limits (AuthThrottle), with its Retry-After. */
function rateLimited({ message, retryAfter }: Refusal): GraphQLError {
  return new GraphQLError(message, {
    extensions: {
      code: 'RATE_LIMITED',
      http: { status: 429, headers: new HeaderMap([['retry-after', String(retryAfter)]]) },
    },
  });
}

/**
 * Apollo's context function: `Authorization: Bearer <key>` (or the bare key) or `?api_key=<key>`
 *. Failing here answers before anything is parsed or run.
 */
export async function authenticate(
  verifier: ApiKeyVerifier,
  throttle: AuthThrottle,
  request: RequestLike,
): Promise<GraphqlContext> {
  const header = request.headers.authorization;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const queryKey = Array.isArray(query.api_key) ? query.api_key[0] : query.api_key;
  const key = extractApiKey(
    Array.isArray(header) ? header[0] : header,
    typeof queryKey === 'string' ? queryKey : undefined,
  );
  if (!key)
    throw unauthorized(
      'missing API key: add ?api_key=<key> to the URL or send "Authorization: Bearer <key>"',
      'UNAUTHENTICATED',
    );
  const blocked = await throttle.checkAddress(request.ip);
  if (blocked) throw rateLimited(blocked);
  let principal: Principal | null;
  try {
    principal = await verifier.verify(key);
  } catch {
    throw new GraphQLError('API keys cannot be checked right now; try again', {
      extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503 } },
    });
  }
  if (!principal) {
    await throttle.recordFailure(request.ip);
    throw unauthorized('invalid API key', 'UNAUTHENTICATED');
  }
  if (!isAllowed(principal, 'read'))
    throw unauthorized(
      `this API key (scope ${principal.scope}) may not use the GraphQL API`,
      'FORBIDDEN',
    );
  const overLimit = await throttle.checkManagement(principal, request.url);
  if (overLimit) throw rateLimited(overLimit);
  return { principal };
}

/** Mutations need a key that may write (a `readonly` key gets 401, as for REST writes). */
export const writeAccessPlugin: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, contextValue }) {
        if (operation?.operation === 'mutation' && !isAllowed(contextValue.principal, 'write')) {
          throw unauthorized(
            `this API key (scope ${contextValue.principal.scope}) may not run mutations`,
            'FORBIDDEN',
          );
        }
      },
    };
  },
};
