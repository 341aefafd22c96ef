import type { Knex } from 'knex';

// Purchase orders. orderId O<n> comes from a sequence; lines keep their name and sku so
// a permanently deleted item never destroys order history (item_id is set null).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE order_number_seq START 1001');
  await knex.schema.createTable('orders', (t) => {
    t.increments('id').primary();
    t.text('order_id').notNullable().unique().defaultTo(knex.raw(`'O' || nextval('order_number_seq')`));
    t.text('supplier_id').notNullable().references('suppliers.id').onDelete('RESTRICT').onUpdate('CASCADE');
    t.text('status').notNullable().defaultTo('pending');
    t.decimal('total_amount', 14, 2).notNullable().defaultTo(0);
    t.text('notes');
    t.text('invoice_number');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('received_at', { useTz: true });
    t.index(['supplier_id']);
    t.index(['created_at']);
  });
  await knex.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'partially_received', 'received'))`,
  );

  await knex.schema.createTable('order_items', (t) => {
    t.increments('id').primary();
    t.integer('order_id').notNullable().references('orders.id').onDelete('CASCADE');
    t.integer('item_id').references('items.id').onDelete('SET NULL');
    t.text('name').notNullable();
    t.text('sku');
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('unit_cost', 12, 2).notNullable();
    t.decimal('received_quantity', 14, 2).notNullable().defaultTo(0);
    t.index(['order_id', 'id']);
    t.index(['item_id']);
  });
  await knex.raw('ALTER TABLE order_items ADD CONSTRAINT order_items_quantity_positive CHECK (quantity > 0)');
  await knex.raw('ALTER TABLE order_items ADD CONSTRAINT order_items_unit_cost_non_negative CHECK (unit_cost >= 0)');
  await knex.raw(
    'ALTER TABLE order_items ADD CONSTRAINT order_items_received_range CHECK (received_quantity >= 0 AND received_quantity <= quantity)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('order_items');
  await knex.schema.dropTable('orders');
  await knex.raw('DROP SEQUENCE order_number_seq');
}
