import type { Knex } from 'knex';

// The Idempotency-Key of a direct sale (POST /api/sales): one row per (user, key), written in the
// sale's own transaction, so a retried request finds the sale it recorded, and the primary key
// makes concurrent duplicates wait for the first and then find it. A key lives 24 hours: the
// service deletes the user's older keys before it records a new one, so a key can be used again
// after that. The row goes with its sale (an archive purge) and with its user.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sale_idempotency_keys', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.text('request_hash').notNullable();
    t.integer('sale_id').references('sales.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'key']);
  });
  await knex.raw('CREATE INDEX sale_idempotency_keys_sale_id ON sale_idempotency_keys (sale_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sale_idempotency_keys');
}
