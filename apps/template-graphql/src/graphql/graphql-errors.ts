import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { RunplaneError, type GraphqlErrorCode } from '@runplane/contracts';
import type { Logger } from '@runplane/platform';

const CODES: Record<number, GraphqlErrorCode | 'SERVICE_UNAVAILABLE'> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  503: 'SERVICE_UNAVAILABLE',
  504: 'SERVICE_UNAVAILABLE',
};

/**
 * Errors of resolvers as contract §2 has them: `{message, path, extensions: {code}}` with the
 * code from the RunplaneError's status (400 BAD_USER_INPUT, 404 NOT_FOUND, 409 CONFLICT...) and
 * `details` for invalid input. Anything unexpected is logged and answered without its message.
 * Apollo's own errors (syntax, validation, auth in the context) pass unchanged.
 */
export function formatGraphqlError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof RunplaneError) {
      const code = CODES[original.status];
      if (code) {
        const extensions: Record<string, unknown> = { code, reason: original.code };
        if (original.details?.length) extensions.details = original.details;
        return {
          message: original.message,
          locations: formatted.locations,
          path: formatted.path,
          extensions,
        };
      }
    }
    if (formatted.path && !(original instanceof RunplaneError && original.status < 500)) {
      // A resolver failed for a reason the caller cannot fix.
      logger.error({ err: original, path: formatted.path }, 'GraphQL resolver failed');
      return {
        message: 'internal server error',
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      };
    }
    return formatted;
  };
}
