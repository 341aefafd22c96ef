import type { Knex } from 'knex';

// Replenishment (issue 17): how much to order above the minimum. With it an item's reorder target is
// minimum_stock + reorder_quantity; without it (null) twice minimum_stock. Same scale as the stock columns.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE items ADD COLUMN reorder_quantity numeric(14, 2)');
  await knex.raw(
    'ALTER TABLE items ADD CONSTRAINT items_reorder_quantity_non_negative CHECK (reorder_quantity IS NULL OR reorder_quantity >= 0)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE items DROP COLUMN reorder_quantity');
}
