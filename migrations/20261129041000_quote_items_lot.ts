import type { Knex } from 'knex';

// Issue 42: a quote line may name the lot it sells from (a GS1 scan at the counter, or `lotNumber` on
// the quote API's line); null when it takes lots first-expiry-first-out. The lot's expiry is read from
// the lot itself, so only its number is kept.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE quote_items ADD COLUMN lot_number text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE quote_items DROP COLUMN IF EXISTS lot_number');
}
