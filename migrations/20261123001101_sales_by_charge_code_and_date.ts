import type { Knex } from 'knex';

// Sales of one charge code in date order: a report or list filtered by code reads its page
// straight from this index (newest first) instead of walking every sale of the range. It also
// serves what sales(charge_code) served (the charge code foreign key's checks), so it replaces it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sales', (t) => {
    t.index(['charge_code', 'created_at', 'id']);
    t.dropIndex(['charge_code']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sales', (t) => {
    t.index(['charge_code']);
    t.dropIndex(['charge_code', 'created_at', 'id']);
  });
}
