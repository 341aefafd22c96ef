import type { Knex } from 'knex';

// The shape connect-pg-simple expects, with an index for the expiry pruner.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.string('sid').primary();
    t.json('sess').notNullable();
    t.timestamp('expire', { precision: 6, useTz: false }).notNullable();
    t.index(['expire'], 'sessions_expire_index');
  });
  await knex.raw(`CREATE INDEX sessions_user_index ON sessions ((sess -> 'passport' ->> 'user'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sessions');
}
