import type { Db } from '../../db/knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/*
 * The notes module's pieces for another module's statement over many records at once (an archive
 * writes and purges thousands of sales and orders): the ids come as SQL, never as one binding each.
 */

/** The notes on the record `referenceId` (an expression of the caller's row) as a JSON array of whole rows, oldest first. */
export const attachedNotesJson = (referenceType: string, referenceId: Sql): Sql =>
  sql`coalesce((SELECT jsonb_agg(to_jsonb(n) ORDER BY n.id) FROM notes n
                 WHERE n.reference_type = ${referenceType} AND n.reference_id = ${referenceId}::text), '[]')`;

/**
 * Deletes the notes on the records `referenceIds` (a subquery of ids) written no later than
 * `writtenBy`, in the caller's transaction; how many.
 */
export async function removeNotesOn(
  trx: Db,
  referenceType: string,
  referenceIds: Sql,
  writtenBy: Sql,
): Promise<number> {
  const { rowCount } = await toRaw<{ rowCount: number }>(
    trx,
    sql`DELETE FROM notes n
         WHERE n.reference_type = ${referenceType} AND n.reference_id IN (SELECT id::text FROM (${referenceIds}) ids (id))
           AND n.created_at <= ${writtenBy}`,
  );
  return rowCount;
}

/** The rows of notes that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const notesReferences: ReferenceCounters = {
  users: [
    { table: 'notes', column: 'created_by', count: (id) => sql`SELECT count(*) FROM notes WHERE created_by = ${id}` },
  ],
};
