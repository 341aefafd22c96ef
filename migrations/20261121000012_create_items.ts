import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.schema.createTable('items', (t) => {
    t.increments('id').primary();
    t.text('name').notNullable();
    t.text('sku').notNullable().unique();
    t.text('description');
    t.integer('category_id').notNullable().references('categories.id').onDelete('RESTRICT');
    t.decimal('price', 12, 2).notNullable();
    // null means the default VAT rate applies
    t.decimal('vat_rate', 5, 4);
    t.decimal('current_stock', 14, 2).notNullable().defaultTo(0);
    t.decimal('minimum_stock', 14, 2).notNullable().defaultTo(0);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['category_id']);
  });
  await knex.raw('ALTER TABLE items ADD CONSTRAINT items_current_stock_non_negative CHECK (current_stock >= 0)');
  await knex.raw('ALTER TABLE items ADD CONSTRAINT items_minimum_stock_non_negative CHECK (minimum_stock >= 0)');
  await knex.raw('ALTER TABLE items ADD CONSTRAINT items_price_non_negative CHECK (price >= 0)');
  await knex.raw(
    'ALTER TABLE items ADD CONSTRAINT items_vat_rate_range CHECK (vat_rate IS NULL OR (vat_rate >= 0 AND vat_rate <= 1))',
  );
  // Search matches name, description and sku case-insensitively with ILIKE '%term%'.
  await knex.raw(
    `CREATE INDEX items_search_trgm ON items USING gin ((name || ' ' || coalesce(description, '') || ' ' || sku) gin_trgm_ops)`,
  );
  await knex.raw('CREATE INDEX items_active_name ON items (is_active, name, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('items');
}
