import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('vat_rates', (t) => {
    t.increments('id').primary();
    t.text('name').notNullable();
    t.decimal('rate', 5, 4).notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('ALTER TABLE vat_rates ADD CONSTRAINT vat_rates_rate_range CHECK (rate >= 0 AND rate <= 1)');
  // At most one default rate, enforced by the database.
  await knex.raw('CREATE UNIQUE INDEX vat_rates_single_default ON vat_rates (is_default) WHERE is_default');
  await knex('vat_rates').insert({ name: 'Standard', rate: '0.2000', is_default: true });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('vat_rates');
}
