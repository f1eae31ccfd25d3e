import { GraphQLError, Kind, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { isUnstorableText, UNSTORABLE_TEXT } from '@runplane/bus';
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
 * Errors of resolvers as the error model has them: `{message, path, extensions: {code}}` with the
 * code from the RunplaneError's status (400 BAD_USER_INPUT, 404 NOT_FOUND, 409 CONFLICT...) and
 * `details` for invalid input. Anything unexpected is logged and answered without its message.
 * Text the database cannot store (a NUL) is the caller's input: 400 as over the bus. Apollo's own
 * errors (syntax, validation, auth in the context) pass, without the values they quote.
 */
export function formatGraphqlError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const unwrapped = unwrapResolverError(error);
    const original = isUnstorableText(unwrapped) ? UNSTORABLE_TEXT() : unwrapped;
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
    return { ...formatted, message: withoutValues(formatted.message, error) };
  };
}

/** graphql-js's reasons that name fields and types, never a value. */
const STRUCTURAL_REASON =
  /^(?:Expected (?:non-nullable )?type "[^"]+"(?: to be an object| not to be null)?\.|Field "[^"]*" (?:of required type "[^"]+" was not provided|is not defined by type "\w+"|must be non-null)\.|Exactly one key must be specified for OneOf type "\w+"\.)/;
/** A scalar's or an enum's own reason, up to the value it quotes ("...: 123"). */
const PARSE_REASON = /^(?:Enum "\w+"|\w+) cannot represent [^:"]+(?=: )/;
/** A literal of the wrong type in the document (validation). */
const LITERAL = /^(Expected value of type "[^"]+"), found [\s\S]*$/;

/**
 * The message without the value it quotes. graphql-js puts the offending value into variable
 * coercion errors (`Variable "$input" got invalid value 123 at "input.value"; String cannot
 * represent a non string value: 123`) and into literal ones; that value may be a secret, a
 * registry password or an env value, which must not come back in an answer (nor go to a log).
 */
export function withoutValues(message: string, error: unknown): string {
  const variable = error instanceof GraphQLError ? error.nodes?.[0] : undefined;
  if (variable?.kind === Kind.VARIABLE_DEFINITION) {
    const name = variable.variable.name.value;
    if (!message.startsWith(`Variable "$${name}" got invalid value `)) return message;
    // Apollo's UserInputError keeps graphql-js's reason (the text after "; ") as originalError.
    const text = (error as GraphQLError).originalError?.message ?? '';
    const prefix = message.endsWith(`; ${text}`) ? message.slice(0, -text.length - 2) : message;
    // Paths are schema field names and list indexes only, so this cannot match inside the value.
    const at = new RegExp(` at "(${name}(?:\\.\\w+|\\[\\d+\\])*)"$`).exec(prefix)?.[1];
    const safe = STRUCTURAL_REASON.exec(text)?.[0] ?? PARSE_REASON.exec(text)?.[0];
    return `Variable "$${name}" got an invalid value${at ? ` at "${at}"` : ''}; ${safe ?? 'it is not of the expected type'}`;
  }
  const literal = LITERAL.exec(message);
  if (literal) return `${literal[1]}.`;
  return PARSE_REASON.exec(message)?.[0] ?? message;
}
