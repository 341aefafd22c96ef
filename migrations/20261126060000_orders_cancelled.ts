import type { Knex } from 'knex';

// Issue 28: an order can be cancelled while nothing on it is received (status 'cancelled').
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_status_check');
  await knex.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'partially_received', 'received', 'cancelled'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_status_check');
  await knex.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'partially_received', 'received'))`,
  );
}
