import type { Knex } from 'knex';

// Issue 39: the first admin, created with a generated password (DATA_DIR/initial-admin-password),
// changes it before anything else; the flag is cleared by the change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users DROP COLUMN IF EXISTS must_change_password');
}
