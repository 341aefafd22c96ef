import type { Knex } from 'knex';

// Issue 32: an outbound webhook failing for 24 hours is set inactive (and its admins emailed): since
// when its deliveries have been failing, cleared by the next delivered one.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE outbound_webhooks ADD COLUMN failing_since timestamptz;
    ALTER TABLE outbound_webhooks ADD COLUMN deactivated_at timestamptz;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE outbound_webhooks DROP COLUMN IF EXISTS failing_since, DROP COLUMN IF EXISTS deactivated_at',
  );
}
