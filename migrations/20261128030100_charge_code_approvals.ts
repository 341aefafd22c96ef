import type { Knex } from 'knex';

// Issue 33: a charge code's approver (matched by email, case-insensitively) and the total over which
// a request on the code waits for their approval; null: no approval needed.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE charge_codes
    ADD COLUMN approver_email text,
    ADD COLUMN approval_threshold numeric(14,2) CHECK (approval_threshold >= 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE charge_codes DROP COLUMN approver_email, DROP COLUMN approval_threshold');
}
