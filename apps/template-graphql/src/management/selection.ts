import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/**
 * Whether the query selects `field` directly under the field being resolved (through fragments
 * too), so optional parts of an answer (a Pod's machine) are asked for only when wanted.
 */
export function selects(info: GraphQLResolveInfo, field: string): boolean {
  const visit = (set: SelectionSetNode | undefined): boolean =>
    !!set?.selections.some((s) => {
      if (s.kind === 'Field') return s.name.value === field;
      if (s.kind === 'InlineFragment') return visit(s.selectionSet);
      return visit(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((node) => visit(node.selectionSet));
}

/** The Pod include flags a query needs. */
export function podIncludes(info: GraphQLResolveInfo) {
  return {
    includeMachine: selects(info, 'machine'),
    includeNetworkVolume: selects(info, 'networkVolume'),
  };
}
