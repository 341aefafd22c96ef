import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_permissions', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('permission').notNullable();
    t.uuid('granted_by').references('users.id').onDelete('SET NULL');
    t.timestamp('granted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'permission']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_permissions');
}
