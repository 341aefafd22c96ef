/** An ILIKE pattern matching the term anywhere, with the term's own %, _ and \ taken literally. */
export const containsPattern = (term: string) => `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
