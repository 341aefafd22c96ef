import type { Knex } from 'knex';

// A sold item cannot be deleted (the bulk delete answers 409, as the single delete already
// did): a sale line keeps pointing at its item, so a refund can find the line by itemId and
// put the stock back. Lines saved before this migration with no item keep NULL.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sale_items', (t) => {
    t.dropForeign(['item_id']);
    t.foreign('item_id').references('items.id').onDelete('RESTRICT');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sale_items', (t) => {
    t.dropForeign(['item_id']);
    t.foreign('item_id').references('items.id').onDelete('SET NULL');
  });
}
