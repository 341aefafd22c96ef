import type { Knex } from 'knex';

// Suppliers keep their client-supplied id (URL-safe, at most 64 characters).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('suppliers', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('contact');
    t.text('email');
    t.text('phone');
    t.text('address');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE suppliers ADD CONSTRAINT suppliers_id_format CHECK (id ~ '^[A-Za-z0-9._~-]{1,64}$')`);
  // import-from-invoice matches suppliers by name case-insensitively
  await knex.raw('CREATE INDEX suppliers_lower_name ON suppliers (lower(name))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('suppliers');
}
