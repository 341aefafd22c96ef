import type { Knex } from 'knex';

// Issue 33: the requester role, below user (a researcher with a budget code: the catalogue and their own requests).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users DROP CONSTRAINT users_role_check');
  await knex.raw(
    `ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('requester', 'user', 'manager', 'admin'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE users SET role = 'user' WHERE role = 'requester'`);
  await knex.raw('ALTER TABLE users DROP CONSTRAINT users_role_check');
  await knex.raw(`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('user', 'manager', 'admin'))`);
}
