import type { Knex } from 'knex';

// Sales are searched (GET /api/sales?search=, the Sales page) by sale number from its start, and by
// part of the recipient's name or email or of any line's SKU or name, all case-insensitive. Each
// condition has an index that takes the term as a parameter (a btree prefix range would need the
// pattern at planning time), so the four are read as one OR of index scans instead of a scan of
// every sale and line:
// - the number: lower(sale_id) ^@ lower(term) ("starts with") through SP-GiST, one short descent;
//   trigrams would intersect the posting lists of "sal", "ale", "202"... that every number shares;
// - the rest: ILIKE '%term%' through trigram indexes. The recipient columns are empty on most sales:
//   their indexes hold only the sales that have one (ILIKE on a column implies it is not null).
// pg_trgm is created by 20261121000012_create_items.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX sales_sale_id_lower_prefix ON sales USING spgist (lower(sale_id))');
  await knex.raw(
    'CREATE INDEX sales_delivered_to_trgm ON sales USING gin (delivered_to gin_trgm_ops) WHERE delivered_to IS NOT NULL',
  );
  await knex.raw(
    'CREATE INDEX sales_delivered_to_email_trgm ON sales USING gin (delivered_to_email gin_trgm_ops) WHERE delivered_to_email IS NOT NULL',
  );
  await knex.raw(
    `CREATE INDEX sale_items_sku_name_trgm ON sale_items USING gin ((item_sku || ' ' || item_name) gin_trgm_ops)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX sale_items_sku_name_trgm');
  await knex.raw('DROP INDEX sales_delivered_to_email_trgm');
  await knex.raw('DROP INDEX sales_delivered_to_trgm');
  await knex.raw('DROP INDEX sales_sale_id_lower_prefix');
}
