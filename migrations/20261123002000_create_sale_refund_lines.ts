import type { Knex } from 'knex';

// Refunds as dated records, for the finance recharges: a refund only ever raised
// sale_items.refunded_quantity (and the sale's running refunded_amount), so when it happened was
// not kept anywhere a batch could read. A row trigger on sale_items writes one row per line whose
// refunded quantity changes, in the refund's own transaction, whatever path refunds (the refund
// endpoint, a seed, a script): the quantity refunded now and its amounts, each the difference of the
// line's cumulative refunded share before and after, rounded half-up to 2 places as the refund
// itself rounds (gross = total_with_vat * refunded / quantity, as sales.refunded_amount sums it;
// net = subtotal * refunded / quantity; VAT = gross - net). The differences telescope: a line's rows
// sum to exactly its cumulative refunded share, and a full refund gives back exactly the line.
// recorded_at is the refund's transaction time. batch_id is set once, by the recharge batch that
// takes the row. A sale purged by an archive takes its refund rows with it (a batch keeps its own
// copies of the amounts).
const SHARE = (side: 'OLD' | 'NEW', column: string) =>
  `round(${side}.${column} * ${side}.refunded_quantity / ${side}.quantity, 2)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sale_refund_lines (
      id bigserial PRIMARY KEY,
      sale_id integer NOT NULL REFERENCES sales(id) ON DELETE CASCADE,
      sale_item_id integer NOT NULL REFERENCES sale_items(id) ON DELETE CASCADE,
      quantity numeric(14, 2) NOT NULL,
      net_amount numeric(14, 2) NOT NULL,
      vat_amount numeric(14, 2) NOT NULL,
      gross_amount numeric(14, 2) NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      batch_id integer
    )`);
  await knex.raw('CREATE INDEX sale_refund_lines_sale ON sale_refund_lines (sale_id)');
  await knex.raw('CREATE INDEX sale_refund_lines_sale_item ON sale_refund_lines (sale_item_id)');
  // what the next batch close reads: the refunds in no batch yet
  await knex.raw('CREATE INDEX sale_refund_lines_unbatched ON sale_refund_lines (recorded_at) WHERE batch_id IS NULL');
  await knex.raw(`
    CREATE FUNCTION sale_refund_lines_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO sale_refund_lines (sale_id, sale_item_id, quantity, net_amount, vat_amount, gross_amount)
      SELECT NEW.sale_id, NEW.id, NEW.refunded_quantity - OLD.refunded_quantity, d.net, d.gross - d.net, d.gross
        FROM (SELECT ${SHARE('NEW', 'subtotal')} - ${SHARE('OLD', 'subtotal')} AS net,
                     ${SHARE('NEW', 'total_with_vat')} - ${SHARE('OLD', 'total_with_vat')} AS gross) d;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER sale_refund_lines_record AFTER UPDATE OF refunded_quantity ON sale_items
    FOR EACH ROW WHEN (NEW.refunded_quantity IS DISTINCT FROM OLD.refunded_quantity)
    EXECUTE FUNCTION sale_refund_lines_record()`);
  // Refunds made before this migration: one row per refunded line, dated by the sale's last change.
  await knex.raw(`
    INSERT INTO sale_refund_lines (sale_id, sale_item_id, quantity, net_amount, vat_amount, gross_amount, recorded_at)
    SELECT si.sale_id, si.id, si.refunded_quantity,
           round(si.subtotal * si.refunded_quantity / si.quantity, 2),
           round(si.total_with_vat * si.refunded_quantity / si.quantity, 2) - round(si.subtotal * si.refunded_quantity / si.quantity, 2),
           round(si.total_with_vat * si.refunded_quantity / si.quantity, 2),
           s.updated_at
      FROM sale_items si JOIN sales s ON s.id = si.sale_id
     WHERE si.refunded_quantity > 0`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER sale_refund_lines_record ON sale_items');
  await knex.raw('DROP FUNCTION sale_refund_lines_record()');
  await knex.raw('DROP TABLE sale_refund_lines');
}
