import type { ReferenceCounters } from '../../db/references';
import { sql, type Sql } from '../../db/sql';

/** The rows of safety data sheets that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const safetyDataSheetsReferences: ReferenceCounters = {
  items: [
    {
      table: 'safety_data_sheets',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM safety_data_sheets WHERE item_id = ${id}`,
    },
  ],
  suppliers: [
    {
      table: 'safety_data_sheets',
      column: 'supplier_id',
      count: (id) => sql`SELECT count(*) FROM safety_data_sheets WHERE supplier_id = ${id}`,
    },
  ],
  users: [
    {
      table: 'safety_data_sheets',
      column: 'uploaded_by',
      count: (id) => sql`SELECT count(*) FROM safety_data_sheets WHERE uploaded_by = ${id}`,
    },
  ],
};

/**
 * Each item's current safety data sheet (issue 43: the latest revision date, then the latest upload)
 * as `alias`, the read model another module's statement joins, with the named columns sds_item_id,
 * sds_id, sds_revision_date (YYYY-MM-DD) and sds_language.
 */
export const currentSdsRefs = (alias: string): Sql =>
  sql`(SELECT DISTINCT ON (item_id) item_id AS sds_item_id, id AS sds_id, to_char(revision_date, 'YYYY-MM-DD') AS sds_revision_date,
              language AS sds_language
         FROM safety_data_sheets ORDER BY item_id, revision_date DESC, uploaded_at DESC, id DESC) ${sql.ident(alias)}`;
