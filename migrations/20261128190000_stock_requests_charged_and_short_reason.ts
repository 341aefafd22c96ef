import type { Knex } from 'knex';

// Issue 39: a fulfilled request keeps what its sale charged (charged_total, beside the total asked),
// and each line handed out short why: 'stock' (the stores had fewer) or 'staff' (the stores
// lowered the quantity). Requests fulfilled before keep their sale's total; their short lines are
// marked 'stock', the only reason the service told requesters then.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE stock_requests ADD COLUMN charged_total numeric(14,2);
    UPDATE stock_requests r SET charged_total = s.total_amount FROM sales s WHERE s.id = r.sale_id;
    ALTER TABLE stock_request_items ADD COLUMN short_reason text CHECK (short_reason IN ('stock', 'staff'));
    UPDATE stock_request_items SET short_reason = 'stock' WHERE fulfilled_quantity < quantity;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE stock_request_items DROP COLUMN IF EXISTS short_reason;
    ALTER TABLE stock_requests DROP COLUMN IF EXISTS charged_total;
  `);
}
