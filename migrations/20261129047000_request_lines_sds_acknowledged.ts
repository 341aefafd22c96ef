import type { Knex } from 'knex';

// Issue 43, on the floor: a request line records whether the requester confirmed they had read the
// item's safety data sheet ("I have read the safety data sheet"), which submitting a hazardous item
// requires. Lines submitted before this change read false.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE stock_request_items ADD COLUMN sds_acknowledged boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE stock_request_items DROP COLUMN IF EXISTS sds_acknowledged');
}
