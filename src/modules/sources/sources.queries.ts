import { sql, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/**
 * The owner's fragment for a cross-module statement: the source each item of those `itemIdsQuery`
 * selects is bought from, as rows (source_item_id, source_id, source_supplier_id, source_price,
 * source_preferred): its preferred source, else the cheapest (ties: the oldest link); an item without
 * a source has no row.
 */
export const chosenSourcesSql = (itemIdsQuery: Sql): Sql =>
  sql`SELECT DISTINCT ON (s.item_id) s.item_id AS source_item_id, s.id AS source_id, s.supplier_id AS source_supplier_id,
                 s.price AS source_price, s.preferred AS source_preferred
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
