import type { Knex } from 'knex';

// Issue 34: the last full reconciliation of the stock ledger (every item's current stock against
// its last movement's new stock), written by the scheduled ledger check and read by the system
// alerts, so a request no longer reads the whole catalogue and ledger. One row: the latest check.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ledger_checks (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      checked_at timestamptz NOT NULL,
      mismatch_count integer NOT NULL CHECK (mismatch_count >= 0),
      mismatched_item_ids integer[] NOT NULL,
      duration_ms integer NOT NULL CHECK (duration_ms >= 0)
    )`);
  await knex.raw(`COMMENT ON TABLE ledger_checks IS
    'The latest full ledger check (system-alerts): how many items were out of line and the first of them by id (at most 1000)'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE ledger_checks');
}
