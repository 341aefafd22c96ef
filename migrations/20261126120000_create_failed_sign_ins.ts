import type { Knex } from 'knex';

// The failed password sign-ins of an account, for its owner and the admins to see (issue 29):
// when, from which address and user agent, and why (a wrong password, or refused by the limits).
// The auth module writes and reads it; the scheduler prunes rows older than 30 days. An attempt
// on an email with no account is not recorded: there is nobody to show it to.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('failed_sign_ins', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.timestamp('occurred_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('ip_address');
    t.text('user_agent');
    t.text('reason').notNullable();
    // how long the growing delay held this attempt's answer
    t.integer('delay_ms').notNullable().defaultTo(0);
  });
  await knex.raw(
    `ALTER TABLE failed_sign_ins ADD CONSTRAINT failed_sign_ins_reason CHECK (reason IN ('wrong_password', 'rate_limited'))`,
  );
  await knex.raw('CREATE INDEX failed_sign_ins_user_recent ON failed_sign_ins (user_id, occurred_at DESC)');
  await knex.raw('CREATE INDEX failed_sign_ins_occurred_at ON failed_sign_ins (occurred_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('failed_sign_ins');
}
