import type { Knex } from 'knex';

// Issue 31: the count page lists its person's own last scans of a stocktake (newest first), read
// by this index however many scans the other counters took since.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX stocktake_counts_counter ON stocktake_counts (stocktake_id, counted_by, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS stocktake_counts_counter');
}
