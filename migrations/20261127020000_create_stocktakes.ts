import type { Knex } from 'knex';

// Issue 31: stocktakes (cycle counts and the full count), their lines, and the log of every scan.
export async function up(knex: Knex): Promise<void> {
  // References ST-<YYYYMMDD>-<n>: n comes from this sequence (never count(*)), so a number is never
  // issued twice, also not after a restore (backups.carry.ts carries every sequence).
  await knex.raw('CREATE SEQUENCE stocktake_number_seq');
  await knex.schema.createTable('stocktakes', (t) => {
    t.increments('id').primary();
    t.text('reference').notNullable().unique();
    t.text('name');
    t.text('status').notNullable().defaultTo('open');
    t.boolean('blind').notNullable().defaultTo(false);
    t.jsonb('scope').notNullable();
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('uncounted');
    t.uuid('posted_by').references('users.id').onDelete('SET NULL');
    t.timestamp('posted_at', { useTz: true });
    t.uuid('cancelled_by').references('users.id').onDelete('SET NULL');
    t.timestamp('cancelled_at', { useTz: true });
  });
  await knex.raw(
    `ALTER TABLE stocktakes ADD CONSTRAINT stocktakes_status_check CHECK (status IN ('open', 'posted', 'cancelled'))`,
  );
  await knex.raw(
    `ALTER TABLE stocktakes ADD CONSTRAINT stocktakes_uncounted_check CHECK (uncounted IS NULL OR uncounted IN ('ignore', 'zero'))`,
  );
  await knex.raw('CREATE INDEX stocktakes_created ON stocktakes (created_at DESC, id DESC)');

  await knex.schema.createTable('stocktake_lines', (t) => {
    t.increments('id').primary();
    t.integer('stocktake_id').notNullable().references('stocktakes.id').onDelete('CASCADE');
    t.integer('item_id').notNullable().references('items.id').onDelete('CASCADE');
    // added by a count of an item outside the scope
    t.boolean('found').notNullable().defaultTo(false);
    // the item's stock when the line was first counted (or at posting, for an uncounted line zeroed)
    t.decimal('expected', 14, 2);
    t.decimal('counted', 14, 2);
    t.uuid('counted_by').references('users.id').onDelete('SET NULL');
    t.timestamp('counted_at', { useTz: true });
    // the item's price when the stocktake was posted: the variance's value is fixed from then on
    t.decimal('unit_price', 12, 2);
    t.unique(['stocktake_id', 'item_id']);
    t.index(['item_id']);
  });
  await knex.raw(
    'ALTER TABLE stocktake_lines ADD CONSTRAINT stocktake_lines_counted_non_negative CHECK (counted >= 0)',
  );
  await knex.raw(
    'CREATE INDEX stocktake_lines_counted_at ON stocktake_lines (counted_at) WHERE counted_at IS NOT NULL',
  );

  await knex.schema.createTable('stocktake_counts', (t) => {
    t.bigIncrements('id').primary();
    t.integer('stocktake_id').notNullable().references('stocktakes.id').onDelete('CASCADE');
    t.integer('item_id').notNullable().references('items.id').onDelete('CASCADE');
    t.text('mode').notNullable();
    t.decimal('quantity', 14, 2).notNullable();
    // the line's count and expected before and after this scan (a set takes the stock again)
    t.decimal('previous_counted', 14, 2);
    t.decimal('new_counted', 14, 2).notNullable();
    t.decimal('previous_expected', 14, 2);
    t.decimal('new_expected', 14, 2).notNullable();
    t.uuid('counted_by').references('users.id').onDelete('SET NULL');
    t.timestamp('counted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.uuid('undone_by').references('users.id').onDelete('SET NULL');
    t.timestamp('undone_at', { useTz: true });
    t.index(['stocktake_id', 'id']);
    t.index(['stocktake_id', 'item_id']);
  });
  await knex.raw(
    `ALTER TABLE stocktake_counts ADD CONSTRAINT stocktake_counts_mode_check CHECK (mode IN ('add', 'set'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('stocktake_counts');
  await knex.schema.dropTableIfExists('stocktake_lines');
  await knex.schema.dropTableIfExists('stocktakes');
  await knex.raw('DROP SEQUENCE IF EXISTS stocktake_number_seq');
}
