import type { Db } from './knex';

export type ReferenceCount = { table: string; column: string; count: number };

/**
 * Counts the rows of every table whose foreign key points at the given row, read from
 * the catalog, so a deletion check stays complete as modules add tables.
 */
export async function countForeignKeyReferences(db: Db, table: string, id: string | number): Promise<ReferenceCount[]> {
  const { rows } = await db.raw<{ rows: { table_name: string; column_name: string }[] }>(
    `SELECT cl.relname AS table_name, att.attname AS column_name
       FROM pg_constraint con
       JOIN pg_class cl ON cl.oid = con.conrelid
       JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = con.conkey[1]
      WHERE con.contype = 'f' AND con.confrelid = ?::regclass AND array_length(con.conkey, 1) = 1
      ORDER BY cl.relname, att.attname`,
    [table],
  );
  if (rows.length === 0) return [];
  // One statement for all referencing tables (and safe on a transaction's single connection).
  const { rows: counts } = await db.raw<{ rows: ReferenceCount[] }>(
    rows
      .map(() => 'SELECT ?::text AS "table", ?::text AS "column", count(*)::int AS count FROM ?? WHERE ?? = ?')
      .join(' UNION ALL '),
    rows.flatMap(({ table_name, column_name }) => [table_name, column_name, table_name, column_name, id]),
  );
  return counts.filter((c) => c.count > 0);
}

/** "stock movements: 3 record(s) reference it (item_id)": the reasons a safe delete answers with. */
export function describeReferences(refs: ReferenceCount[], notes: number): string[] {
  const reasons = refs.map((r) => `${r.table.replace(/_/g, ' ')}: ${r.count} record(s) reference it (${r.column})`);
  if (notes > 0) reasons.push(`notes: ${notes} note(s) are attached to it`);
  return reasons;
}
