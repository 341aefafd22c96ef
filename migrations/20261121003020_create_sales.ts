import type { Knex } from 'knex';

// Sales and their lines. History outlives items (item_id SET NULL, name/sku kept) and
// users (processed_by SET NULL); a charge code with sales cannot be deleted.
export async function up(knex: Knex): Promise<void> {
  // Human sale numbers SALE-<YYYYMMDD>-<n>: n comes from this sequence (never count(*)).
  await knex.raw('CREATE SEQUENCE sale_number_seq');
  await knex.schema.createTable('sales', (t) => {
    t.increments('id').primary();
    t.text('sale_id').notNullable().unique();
    t.text('charge_code').notNullable().references('charge_codes.code').onUpdate('CASCADE').onDelete('RESTRICT');
    t.text('quote_id');
    t.decimal('subtotal_amount', 14, 2).notNullable();
    t.decimal('vat_amount', 14, 2).notNullable();
    t.decimal('total_amount', 14, 2).notNullable();
    t.boolean('vat_applied').notNullable().defaultTo(true);
    t.decimal('refunded_amount', 14, 2).notNullable().defaultTo(0);
    t.text('customer_notes');
    t.text('status').notNullable().defaultTo('completed');
    t.boolean('is_paid').notNullable().defaultTo(false);
    t.uuid('processed_by').references('users.id').onDelete('SET NULL');
    t.text('delivered_to');
    t.text('delivered_to_email');
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at', 'id']);
    t.index(['charge_code']);
  });
  await knex.raw(
    `ALTER TABLE sales ADD CONSTRAINT sales_status_check CHECK (status IN ('completed', 'paid', 'partially_refunded', 'refunded'))`,
  );

  await knex.schema.createTable('sale_items', (t) => {
    t.increments('id').primary();
    t.integer('sale_id').notNullable().references('sales.id').onDelete('CASCADE');
    t.integer('item_id').references('items.id').onDelete('SET NULL');
    t.text('item_name').notNullable();
    t.text('item_sku').notNullable();
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('unit_price', 12, 2).notNullable();
    t.decimal('vat_rate', 5, 4).notNullable();
    t.decimal('vat_amount', 14, 2).notNullable();
    t.decimal('subtotal', 14, 2).notNullable();
    t.decimal('total_with_vat', 14, 2).notNullable();
    t.decimal('refunded_quantity', 14, 2).notNullable().defaultTo(0);
    t.index(['sale_id']);
    t.index(['item_id']);
  });
  await knex.raw(
    'ALTER TABLE sale_items ADD CONSTRAINT sale_items_refund_range CHECK (quantity > 0 AND refunded_quantity >= 0 AND refunded_quantity <= quantity)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sale_items');
  await knex.schema.dropTable('sales');
  await knex.raw('DROP SEQUENCE IF EXISTS sale_number_seq');
}
