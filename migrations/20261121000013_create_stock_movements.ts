import type { Knex } from 'knex';

// The stock ledger. Append-only: rows outlive their item (item_id is set null on a
// permanent delete, the name and sku stay).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('stock_movements', (t) => {
    t.increments('id').primary();
    t.integer('item_id').references('items.id').onDelete('SET NULL');
    t.text('item_name').notNullable();
    t.text('item_sku').notNullable();
    t.text('type').notNullable();
    // signed change: positive for in, negative for out, newStock - previousStock for adjustment
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('previous_stock', 14, 2).notNullable();
    t.decimal('new_stock', 14, 2).notNullable();
    t.text('reason').notNullable().defaultTo('');
    t.text('reference_type');
    t.text('reference_id');
    t.uuid('performed_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['item_id', 'id']);
    t.index(['created_at']);
    t.index(['reference_type', 'reference_id']);
  });
  await knex.raw(
    `ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_type_check CHECK (type IN ('in', 'out', 'adjustment'))`,
  );
  await knex.raw(
    'ALTER TABLE stock_movements ADD CONSTRAINT stock_movements_arithmetic CHECK (new_stock = previous_stock + quantity AND new_stock >= 0)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('stock_movements');
}
