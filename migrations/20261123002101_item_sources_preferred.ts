import type { Knex } from 'knex';

// Replenishment (issue 17): an item source can be the item's preferred one, at most one per item
// (the partial unique index); marking one preferred unmarks the others in the same transaction.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE item_sources ADD COLUMN preferred boolean NOT NULL DEFAULT false');
  await knex.raw('CREATE UNIQUE INDEX item_sources_one_preferred ON item_sources (item_id) WHERE preferred');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX item_sources_one_preferred');
  await knex.raw('ALTER TABLE item_sources DROP COLUMN preferred');
}
