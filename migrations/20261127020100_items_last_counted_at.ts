import type { Knex } from 'knex';

// Issue 31: when an item was last counted by a posted stocktake (null: never), for the cycle-count
// suggestions and the dashboard's items overdue for a count.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE items ADD COLUMN last_counted_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE items DROP COLUMN last_counted_at');
}
