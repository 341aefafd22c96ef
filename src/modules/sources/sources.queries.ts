import { sql, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/**
 * The owner's fragment for a cross-module statement: the source each item of those `itemIdsQuery`
 * selects is bought from, as item_sources rows (item_id, id, supplier_id, price, preferred): its
 * preferred source, else the cheapest (ties: the oldest link); an item without a source has no row.
 */
export const chosenSourcesSql = (itemIdsQuery: Sql): Sql =>
  sql`SELECT DISTINCT ON (s.item_id) s.item_id, s.id, s.supplier_id, s.price, s.preferred
            FROM item_sources s
           WHERE s.item_id IN (${itemIdsQuery})
           ORDER BY s.item_id, s.preferred DESC, s.price, s.id`;

/** The rows of item sources that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const sourcesReferences: ReferenceCounters = {
  items: [
    {
      table: 'item_sources',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM item_sources WHERE item_id = ${id}`,
    },
  ],
  suppliers: [
    {
      table: 'item_sources',
      column: 'supplier_id',
      count: (id) => sql`SELECT count(*) FROM item_sources WHERE supplier_id = ${id}`,
    },
  ],
};
