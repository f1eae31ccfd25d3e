import {
  GraphQLError,
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** How much one GraphQL document may ask for (settings RUNPLANE_GRAPHQL_MAX_*). */
export interface DocumentLimits {
  /** Lexical tokens: the parser stops past them, so nothing below ever sees a bigger document. */
  tokens: number;
  /** Deepest nesting of fields (`{ myself { pods { id } } }` is 3). */
  depth: number;
  /** Aliased fields: each alias makes a field resolve once more. */
  aliases: number;
  /** Field selections, fragments counted each time they are spread. */
  fields: number;
  /** Fields of the operation's root type, each one a separate top-level operation. */
  rootFields: number;
}

type Counted = 'depth' | 'aliases' | 'fields' | 'rootFields';
const WORDS: Record<Counted, string> = {
  depth: 'levels of nested fields',
  aliases: 'aliases',
  fields: 'field selections',
  rootFields: 'root fields',
};

/**
 * Refuses a request whose document is over the limits with HTTP 400 GRAPHQL_VALIDATION_FAILED.
 * Called from Apollo's context function, i.e. before Apollo parses and validates the document:
 * graphql-js's own validation is quadratic in repeated fields, so a limit enforced as one more
 * validation rule would come after the cost it is meant to bound. A document that does not parse
 * passes: Apollo reports its syntax error (with the same token limit).
 */
export function assertWithinLimits(
  request: { body?: unknown; query?: unknown },
  limits: DocumentLimits,
): void {
  const source = [request.body, request.query]
    .map((p) => (p && typeof p === 'object' ? (p as { query?: unknown }).query : undefined))
    .find((q) => typeof q === 'string');
  if (typeof source !== 'string') return;
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: limits.tokens, noLocation: true });
  } catch {
    return;
  }
  const over = firstLimitExceeded(document, limits);
  if (over)
    throw new GraphQLError(
      `the document exceeds the limit of ${limits[over]} ${WORDS[over]}: split it into smaller requests`,
      { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } } },
    );
}

/**
 * The first limit an operation of the document crosses. The walk stops there, so nested spreads
 * (whose expansion grows exponentially) cannot make the counting itself expensive.
 */
export function firstLimitExceeded(
  document: DocumentNode,
  limits: DocumentLimits,
): Counted | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  for (const operation of document.definitions) {
    if (operation.kind !== Kind.OPERATION_DEFINITION) continue;
    const seen: Record<Counted, number> = { depth: 0, aliases: 0, fields: 0, rootFields: 0 };
    let over: Counted | undefined;
    const count = (what: Counted, value: number) => {
      seen[what] = Math.max(seen[what], value);
      if (!over && seen[what] > limits[what]) over = what;
    };
    const walk = (set: SelectionSetNode, depth: number, spreading: Set<string>) => {
      for (const s of set.selections) {
        if (over) return;
        if (s.kind === Kind.FIELD) {
          count('fields', seen.fields + 1);
          if (s.alias) count('aliases', seen.aliases + 1);
          if (depth === 1) count('rootFields', seen.rootFields + 1);
          count('depth', depth);
          if (s.selectionSet) walk(s.selectionSet, depth + 1, spreading);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          walk(s.selectionSet, depth, spreading);
        } else {
          const fragment = fragments.get(s.name.value);
          // Unknown and cyclic spreads are validation errors Apollo reports later.
          if (!fragment || spreading.has(s.name.value)) continue;
          spreading.add(s.name.value);
          walk(fragment.selectionSet, depth, spreading);
          spreading.delete(s.name.value);
        }
      }
    };
    walk(operation.selectionSet, 1, new Set());
    if (over) return over;
  }
  return undefined;
}
