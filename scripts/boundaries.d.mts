// The types of boundaries.mjs for the tests that run it on fixture trees.

/** The imports between modules that may still lie on a cycle between modules, as "from → to". */
export const KNOWN_CYCLE_EDGES: Set<string>;

/**
 * The boundary violations of root's src/ under `config` (a dependency-cruiser configuration), each a
 * line "<severity> <rule>: ...", and how many edges of `knownCycleEdges` still lie on a cycle.
 */
export function checkBoundaries(options?: {
  root?: string;
  config?: string;
  knownCycleEdges?: Set<string>;
}): Promise<{ violations: string[]; knownCycleEdges: number }>;
