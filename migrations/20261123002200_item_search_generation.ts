import type { Knex } from 'knex';

// The searched item list keeps each search's ordered matches in memory (items.search-cache.ts) and
// must know, in the same statement that reads a page, whether anything a search sees has changed
// since. That is this one row: every statement that adds, removes or renames an item, or changes
// its description, SKU, category or active flag, gives it a new random value in its own
// transaction. Random rather than a counter, so a restored backup or a cloned database never
// repeats a value that once stood for other rows. Stock changes (current_stock) do not touch it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE item_search_generation (
      single boolean PRIMARY KEY DEFAULT true CHECK (single),
      generation uuid NOT NULL DEFAULT gen_random_uuid()
    )`);
  await knex.raw('INSERT INTO item_search_generation DEFAULT VALUES');
  await knex.raw(`
    CREATE FUNCTION item_search_generation_next() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE item_search_generation SET generation = gen_random_uuid();
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER items_search_generation
      AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF name, description, sku, category_id, is_active ON items
      FOR EACH STATEMENT EXECUTE FUNCTION item_search_generation_next()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER items_search_generation ON items');
  await knex.raw('DROP FUNCTION item_search_generation_next()');
  await knex.raw('DROP TABLE item_search_generation');
}
