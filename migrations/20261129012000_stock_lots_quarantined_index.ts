import type { Knex } from 'knex';

// Issue 42: the lots list's quarantined lots (GET /api/lots?status=quarantined) read only the few
// quarantined lots holding stock, by expiry, as the others read stock_lots_holding_by_expiry.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX stock_lots_quarantined_holding ON stock_lots (expires_on, id) WHERE quantity > 0 AND quarantined_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS stock_lots_quarantined_holding');
}
