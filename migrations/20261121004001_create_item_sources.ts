import type { Knex } from 'knex';

// Item-supplier links. A link means nothing without either end, so it goes with them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('item_sources', (t) => {
    t.increments('id').primary();
    t.text('supplier_id').notNullable().references('suppliers.id').onDelete('CASCADE').onUpdate('CASCADE');
    t.integer('item_id').notNullable().references('items.id').onDelete('CASCADE');
    t.decimal('price', 12, 2).notNullable();
    t.text('notes');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['supplier_id', 'item_id']);
    t.index(['item_id']);
  });
  await knex.raw('ALTER TABLE item_sources ADD CONSTRAINT item_sources_price_non_negative CHECK (price >= 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('item_sources');
}
