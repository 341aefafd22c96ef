import type { Knex } from 'knex';

// Acknowledgements of low-stock notifications, one row per item. An acknowledgement belongs
// to one low-stock episode: it records the last movement id at the time, and any later
// movement that lifts the item above its minimum ends the episode (the row is then stale
// and ignored, so a new episode shows up unacknowledged again).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('low_stock_acknowledgements', (t) => {
    t.integer('item_id').primary().references('items.id').onDelete('CASCADE');
    t.integer('last_movement_id');
    t.timestamp('acknowledged_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.uuid('acknowledged_by').references('users.id').onDelete('SET NULL');
    // set by DELETE /api/notifications/low-stock: the acknowledged alert is hidden from the list
    t.timestamp('cleared_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('low_stock_acknowledgements');
}
