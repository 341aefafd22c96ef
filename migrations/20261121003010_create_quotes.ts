import type { Knex } from 'knex';

// Draft quotes: one per (user, sessionId). Lines copy the item's name, sku, price and
// VAT rate at save time and keep them when the item is later deleted.
export async function up(knex: Knex): Promise<void> {
  // Human quote numbers Q<YYYYMMDD>-<n>: n comes from this sequence (never count(*)).
  await knex.raw('CREATE SEQUENCE quote_number_seq');
  await knex.schema.createTable('quotes', (t) => {
    t.increments('id').primary();
    t.text('quote_id').notNullable().unique();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('session_id').notNullable();
    t.text('charge_code');
    t.boolean('vat_applied').notNullable().defaultTo(true);
    t.text('customer_notes');
    t.decimal('subtotal_amount', 14, 2).notNullable().defaultTo(0);
    t.decimal('vat_amount', 14, 2).notNullable().defaultTo(0);
    t.decimal('total_amount', 14, 2).notNullable().defaultTo(0);
    t.text('status').notNullable().defaultTo('draft');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['user_id', 'session_id']);
  });

  await knex.schema.createTable('quote_items', (t) => {
    t.increments('id').primary();
    t.integer('quote_id').notNullable().references('quotes.id').onDelete('CASCADE');
    t.integer('item_id').references('items.id').onDelete('SET NULL');
    t.text('item_name').notNullable();
    t.text('item_sku').notNullable();
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('unit_price', 12, 2).notNullable();
    t.decimal('vat_rate', 5, 4).notNullable();
    t.decimal('vat_amount', 14, 2).notNullable();
    t.decimal('subtotal', 14, 2).notNullable();
    t.decimal('total_with_vat', 14, 2).notNullable();
    t.index(['quote_id']);
    t.index(['item_id']);
  });
  await knex.raw('ALTER TABLE quote_items ADD CONSTRAINT quote_items_quantity_positive CHECK (quantity > 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('quote_items');
  await knex.schema.dropTable('quotes');
  await knex.raw('DROP SEQUENCE IF EXISTS quote_number_seq');
}
