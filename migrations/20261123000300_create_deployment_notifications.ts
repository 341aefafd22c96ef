import type { Knex } from 'knex';

// Deployment notifications received by POST /api/webhook/watchtower and /api/webhook/github.
// delivery_id is GitHub's X-GitHub-Delivery: unique, so a redelivered event is stored once
// (NULLs, as Watchtower sends no delivery id, never conflict).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('deployment_notifications', (t) => {
    t.increments('id').primary();
    t.text('source').notNullable();
    t.text('event').notNullable();
    t.text('service');
    t.text('image');
    t.text('tag');
    t.text('status');
    t.text('host');
    t.text('message');
    t.text('repository');
    t.text('ref');
    t.text('commit_sha');
    t.text('actor');
    t.text('summary');
    t.text('delivery_id').unique();
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['received_at', 'id']);
  });
  await knex.raw(
    `ALTER TABLE deployment_notifications ADD CONSTRAINT deployment_notifications_source CHECK (source IN ('watchtower', 'github'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('deployment_notifications');
}
