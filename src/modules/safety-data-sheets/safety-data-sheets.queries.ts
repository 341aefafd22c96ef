import type { ReferenceCounters } from '../../db/references';
import { sql } from '../../db/sql';

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
