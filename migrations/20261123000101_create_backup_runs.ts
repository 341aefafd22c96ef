import type { Knex } from 'knex';

// One row per scheduled-backup slot. The unique slot is how several instances agree that a
// slot is taken: the first to insert it runs the backup. ok stays NULL while the backup runs.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE backup_runs (
      id bigserial PRIMARY KEY,
      slot timestamptz NOT NULL UNIQUE,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      ok boolean,
      filename text,
      error text
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('backup_runs');
}
