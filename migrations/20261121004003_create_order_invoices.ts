import type { Knex } from 'knex';

// Invoice PDFs live in PostgreSQL so every instance serves them and backups include them.
// One invoice per order; a new upload replaces the old one.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('order_invoices', (t) => {
    t.increments('id').primary();
    t.integer('order_id').notNullable().unique().references('orders.id').onDelete('CASCADE');
    t.text('filename').notNullable();
    t.integer('size_bytes').notNullable();
    t.text('sha256').notNullable();
    t.binary('data').notNullable();
    t.uuid('uploaded_by').references('users.id').onDelete('SET NULL');
    t.timestamp('uploaded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('order_invoices');
}
