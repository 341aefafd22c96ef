import type { Knex } from 'knex';

// Invoice lines are matched to items by name (issue 28): equal once lowered with runs of whitespace
// made one space, else the most similar by trigrams. Both read this expression, which the index
// serves (pg_trgm's GIN operator class answers = as well as %), so a match reads no whole catalogue.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(String.raw`CREATE INDEX items_normalised_name_trgm ON items USING gin ((lower(regexp_replace(name, '\s+', ' ', 'g'))) gin_trgm_ops)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX items_normalised_name_trgm');
}
