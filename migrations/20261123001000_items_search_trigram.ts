import type { Knex } from 'knex';

// Search is a case-insensitive "contains" over name, description and sku. The text it matches is
// kept lowered in a stored column, so a row's check is a plain LIKE on stored bytes instead of
// building and lowering the text again for every candidate the trigram index returns (ILIKE on an
// expression did both). lower(text) LIKE lower(pattern) is what ILIKE computes, so the rows found
// are the same. pg_trgm itself is created by 20261121000012_create_items.
//
// The counter finds an item by its SKU typed in any case: lower(sku) gets its own index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE items ADD COLUMN search_text text NOT NULL
       GENERATED ALWAYS AS (lower(name || ' ' || coalesce(description, '') || ' ' || sku)) STORED`,
  );
  await knex.raw('CREATE INDEX items_search_text_trgm ON items USING gin (search_text gin_trgm_ops)');
  await knex.raw('DROP INDEX items_search_trgm');
  await knex.raw('CREATE INDEX items_sku_lower ON items (lower(sku))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX items_sku_lower');
  await knex.raw(
    `CREATE INDEX items_search_trgm ON items USING gin ((name || ' ' || coalesce(description, '') || ' ' || sku) gin_trgm_ops)`,
  );
  await knex.raw('ALTER TABLE items DROP COLUMN search_text');
}
