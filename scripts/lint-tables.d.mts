// The types of lint-tables.mjs for the tests that run it on fixture trees.

/** Each module folder and the tables it owns. */
export const OWNERS: Record<string, string[]>;

/** The violations in the src/ folder of `root`, sorted, each as "file:line: what" with file relative to root. */
export function lintTables(root?: string): Promise<string[]>;
