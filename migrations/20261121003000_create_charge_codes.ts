import type { Knex } from 'knex';

// Charge codes (budget codes), their excluded categories and their authorised users.
// The pin is stored hashed only.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('charge_codes', (t) => {
    t.increments('id').primary();
    t.text('code').notNullable().unique();
    t.text('title').notNullable();
    t.uuid('authorised_by').references('users.id').onDelete('SET NULL');
    t.timestamp('valid_from', { useTz: true }).notNullable();
    t.timestamp('valid_until', { useTz: true }).notNullable();
    t.text('cost_centre').notNullable().defaultTo('');
    t.text('pin_hash');
    t.boolean('on_hold').notNullable().defaultTo(false);
    t.text('hold_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['valid_until']);
  });
  await knex.raw('ALTER TABLE charge_codes ADD CONSTRAINT charge_codes_valid_range CHECK (valid_from <= valid_until)');

  await knex.schema.createTable('charge_code_exclusions', (t) => {
    t.integer('charge_code_id').notNullable().references('charge_codes.id').onDelete('CASCADE');
    t.integer('category_id').notNullable().references('categories.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['charge_code_id', 'category_id']);
  });

  await knex.schema.createTable('charge_code_authorised_users', (t) => {
    t.increments('id').primary();
    t.integer('charge_code_id').notNullable().references('charge_codes.id').onDelete('CASCADE');
    t.text('user_name').notNullable();
    t.text('email').notNullable();
    t.text('department').notNullable().defaultTo('');
    t.text('notes');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'CREATE UNIQUE INDEX charge_code_authorised_users_email_unique ON charge_code_authorised_users (charge_code_id, lower(email))',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('charge_code_authorised_users');
  await knex.schema.dropTable('charge_code_exclusions');
  await knex.schema.dropTable('charge_codes');
}
