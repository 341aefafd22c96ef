import type { Knex } from 'knex';

// TRUNCATE fires no row or DELETE triggers: reset item_counts with it, so the list total
// never outlives the rows it counts.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION item_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM item_counts;
      RETURN NULL;
    END $$`);
  await knex.raw(
    `CREATE TRIGGER items_count_truncate AFTER TRUNCATE ON items FOR EACH STATEMENT EXECUTE FUNCTION item_counts_after_truncate()`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER items_count_truncate ON items');
  await knex.raw('DROP FUNCTION item_counts_after_truncate()');
}
