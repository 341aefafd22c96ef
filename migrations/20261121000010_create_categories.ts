import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('categories', (t) => {
    t.increments('id').primary();
    t.text('name').notNullable();
    t.text('description');
    t.text('icon');
    t.text('color');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Bulk import matches a category by name, case-insensitively and exactly.
  await knex.raw('CREATE UNIQUE INDEX categories_name_lower_unique ON categories (lower(name))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('categories');
}
