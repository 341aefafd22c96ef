import type { Db } from './knex';
import { sql, toRaw, type Sql } from './sql';

/** The tables whose rows a deletion check guards: each is referenced by other modules' rows. */
export type ReferencedTable = 'items' | 'categories' | 'suppliers' | 'users';

/** One owner's rows pointing at a record: its table and column (as the reasons name them) and how many point at `id`. */
export type ReferenceCounter = { table: string; column: string; count: (id: string | number) => Sql };

/** An owner's counters, by the table its rows point at. */
export type ReferenceCounters = Partial<Record<ReferencedTable, ReferenceCounter[]>>;

export type ReferenceCount = { table: string; column: string; count: number };

/*
 * Each owner counts its own rows (its `<module>References`, a scalar count over its table). The
 * owners import the modules whose records they point at, so those cannot import the owners back:
 * the composition root (src/owners.ts) registers every owner's counters here when it builds the
 * app, and a deletion check asks them all through countReferences.
 */
const registered = new Map<ReferencedTable, ReferenceCounter[]>();

/** Every owner's counters (src/owners.ts), replacing any registered before. */
export function registerReferenceCounters(owners: ReferenceCounters[]): void {
  registered.clear();
  for (const counters of owners) {
    for (const [table, list] of Object.entries(counters) as [ReferencedTable, ReferenceCounter[]][]) {
      registered.set(table, [...(registered.get(table) ?? []), ...list]);
    }
  }
}

/** The registered counters of the rows that point at `table` (the completeness test reads them). */
export function referenceCountersOf(table: ReferencedTable): readonly ReferenceCounter[] {
  const counters = registered.get(table);
  if (!counters)
    throw new Error(`No reference counters registered for ${table} (registerReferenceCounters in buildApp)`);
  return counters;
}

/**
 * How many rows of each owner point at the record `id` of `table`, those with any, by table and
 * column: every owner's count in one statement (safe on a transaction's single connection).
 */
export async function countReferences(db: Db, table: ReferencedTable, id: string | number): Promise<ReferenceCount[]> {
  const counters = referenceCountersOf(table);
  const { rows } = await toRaw<{ rows: ReferenceCount[] }>(
    db,
    sql.join(
      counters.map(
        (c) => sql`SELECT ${c.table}::text AS "table", ${c.column}::text AS "column", (${c.count(id)})::int AS count`,
      ),
      sql.raw(' UNION ALL '),
    ),
  );
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.filter((c) => c.count > 0).sort((a, b) => order(a.table, b.table) || order(a.column, b.column));
}

/** "stock movements: 3 record(s) reference it (item_id)": the reasons a safe delete answers with. */
export function describeReferences(refs: ReferenceCount[], notes: number): string[] {
  const reasons = refs.map((r) => `${r.table.replace(/_/g, ' ')}: ${r.count} record(s) reference it (${r.column})`);
  if (notes > 0) reasons.push(`notes: ${notes} note(s) are attached to it`);
  return reasons;
}
