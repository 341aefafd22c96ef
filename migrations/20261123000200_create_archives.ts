import type { Knex } from 'knex';

// Archives of old sales, orders and stock movements, and the ids each archive file holds.
// The id list is what a purge deletes (never a fresh age query), and content_hash (md5 of the
// record's line in the file) lets a purge keep a record that changed after it was archived.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('archives', (t) => {
    t.increments('id').primary();
    t.text('archive_name').notNullable().unique();
    t.integer('age_threshold_days').notNullable();
    t.specificType('record_types', 'text[]').notNullable();
    t.timestamp('cutoff', { useTz: true }).notNullable();
    t.integer('sales_count').notNullable();
    t.integer('orders_count').notNullable();
    t.integer('stock_movements_count').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.text('sha256').notNullable();
    t.text('status').notNullable().defaultTo('completed');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.uuid('purged_by').references('users.id').onDelete('SET NULL');
    t.timestamp('purged_at', { useTz: true });
    t.index(['created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE archives ADD CONSTRAINT archives_status_check CHECK (status IN ('completed', 'purged'))`);
  await knex.raw(
    `ALTER TABLE archives ADD CONSTRAINT archives_record_types_check
       CHECK (cardinality(record_types) > 0 AND record_types <@ ARRAY['sales', 'orders', 'stock_movements'])`,
  );
  await knex.raw('ALTER TABLE archives ADD CONSTRAINT archives_age_threshold_check CHECK (age_threshold_days >= 0)');

  await knex.schema.createTable('archive_records', (t) => {
    // deferred: an archive's rows are recorded while its file is written, and the archive row itself
    // is inserted once the file is complete, in the same transaction
    t.integer('archive_id').notNullable().references('archives.id').onDelete('CASCADE').deferrable('deferred');
    t.text('record_type').notNullable();
    t.integer('record_id').notNullable();
    t.binary('content_hash').notNullable();
    t.primary(['archive_id', 'record_type', 'record_id']);
  });
  await knex.raw(
    `ALTER TABLE archive_records ADD CONSTRAINT archive_records_type_check CHECK (record_type IN ('sales', 'orders', 'stock_movements'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('archive_records');
  await knex.schema.dropTable('archives');
}
