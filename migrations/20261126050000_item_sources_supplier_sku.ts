import type { Knex } from 'knex';

// Purchasing from invoices (issue 28): an item source carries the supplier's own part number, which
// invoices print beside (or glued to) the line's name. It names one item per supplier, in any case,
// so invoice lines can be matched by it; the unique index backs the 409 on a duplicate.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE item_sources ADD COLUMN supplier_sku text');
  await knex.raw(
    'CREATE UNIQUE INDEX item_sources_supplier_sku ON item_sources (supplier_id, lower(supplier_sku)) WHERE supplier_sku IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX item_sources_supplier_sku');
  await knex.raw('ALTER TABLE item_sources DROP COLUMN supplier_sku');
}
