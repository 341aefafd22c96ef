import type { Knex } from 'knex';

// Issue 42: a stocktake counts a lot-tracked item per lot. A line is an item's (lot_number null) or
// one lot's of it; the scan's expiry is kept on the line, for the lot that posting creates when the
// item does not have it yet. Each scan records the lot it counted.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stocktake_lines ADD COLUMN lot_number text, ADD COLUMN lot_expires_on date`);
  await knex.raw('ALTER TABLE stocktake_lines DROP CONSTRAINT stocktake_lines_stocktake_id_item_id_unique');
  // one line per item and lot (the item's own line: no lot); the count's ON CONFLICT names this index
  await knex.raw(
    `CREATE UNIQUE INDEX stocktake_lines_item_lot ON stocktake_lines (stocktake_id, item_id, (coalesce(lot_number, '')))`,
  );
  await knex.raw(`ALTER TABLE stocktake_counts ADD COLUMN lot_number text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE stocktake_counts DROP COLUMN IF EXISTS lot_number');
  await knex.raw(
    `DELETE FROM stocktake_lines l WHERE lot_number IS NOT NULL
       AND EXISTS (SELECT 1 FROM stocktake_lines o WHERE o.stocktake_id = l.stocktake_id AND o.item_id = l.item_id AND o.id < l.id)`,
  );
  await knex.raw('DROP INDEX IF EXISTS stocktake_lines_item_lot');
  await knex.raw(
    'ALTER TABLE stocktake_lines ADD CONSTRAINT stocktake_lines_stocktake_id_item_id_unique UNIQUE (stocktake_id, item_id)',
  );
  await knex.raw('ALTER TABLE stocktake_lines DROP COLUMN IF EXISTS lot_number, DROP COLUMN IF EXISTS lot_expires_on');
}
