import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/** Whether the sale (by its record id) exists (a note's reference). */
export async function saleExists(db: Db, id: number): Promise<boolean> {
  return (await db('sales').where({ id }).first('id')) !== undefined;
}

/** How many sales are on the charge code (a code in use is never deleted). */
export async function salesOnChargeCode(db: Db, code: string): Promise<number> {
  const [{ count }] = await db('sales').where({ charge_code: code }).count<{ count: number }[]>('* as count');
  return count;
}

/**
 * The sales module's part of an archive (the archives module): `records` is every sale as the
 * archive reads it, a subquery of named columns: `id`, `created_at`, `reference` (its number, as
 * stock movements name it), `record` (the row whole as PostgreSQL stores it, to_jsonb, with its
 * lines as `items` in id order) and the reasons a purge keeps it (`partially_refunded`; `unpaid`:
 * not paid and not wholly refunded). `lock` and `purge` take the sales of the caller's query of
 * ids, in the caller's transaction.
 */
export const salesArchive = {
  records: sql`(SELECT s.id, s.created_at, s.sale_id AS reference,
                       to_jsonb(s) || jsonb_build_object('items', coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.id)
                                                                             FROM sale_items l WHERE l.sale_id = s.id), '[]')) AS record,
                       s.status = 'partially_refunded' AS partially_refunded,
                       NOT s.is_paid AND s.status <> 'refunded' AS unpaid
                  FROM sales s)`,
  /** Locks the sales in id order, as a refund or a payment locks its sale. */
  async lock(trx: Knex.Transaction, ids: Sql): Promise<void> {
    await toRaw(
      trx,
      sql`SELECT count(*) FROM (SELECT id FROM sales WHERE id IN (${ids}) ORDER BY id FOR UPDATE) locked`,
    );
  },
  /** Deletes the sales (their lines with them); how many. */
  async purge(trx: Knex.Transaction, ids: Sql): Promise<number> {
    return (await toRaw<{ rowCount: number }>(trx, sql`DELETE FROM sales WHERE id IN (${ids})`)).rowCount;
  },
};

/*
 * The sales module's read models for the finance recharges, which read sales with their lines and
 * refund lines in one statement: the batch close claims the refund lines and writes its entries
 * in one, and the reports stream the lines of thousands of sales. Each is a plain projection of
 * its table under the caller's `alias` with named columns, which are all a caller reads of it, so
 * PostgreSQL plans it as the table itself (its indexes included).
 */

/** A sale's summary: its record id, number (SALE-...), time, charge code, whether paid, and its amounts as sold and refunded (gross). */
const SALE_SUMMARY =
  sql.raw(`SELECT id AS sale_ref, sale_id AS sale_number, created_at AS sale_created_at, charge_code AS sale_charge_code,
       is_paid AS sale_is_paid, subtotal_amount AS sale_net, vat_amount AS sale_vat, total_amount AS sale_gross,
       refunded_amount AS sale_refunded FROM sales`);

/** A sale line's summary: its id, its sale's record id, the item it sold (as sold), the quantity, price and amounts, and how many were refunded. */
const LINE_SUMMARY_COLUMNS = `id AS line_id, sale_id AS line_sale_ref, item_id AS line_item_id, item_name AS line_item_name, item_sku AS line_item_sku,
       quantity AS line_quantity, unit_price AS line_unit_price, subtotal AS line_net, vat_amount AS line_vat,
       total_with_vat AS line_gross, refunded_quantity AS line_refunded_quantity`;
const LINE_SUMMARY = sql.raw(`SELECT ${LINE_SUMMARY_COLUMNS} FROM sale_items`);

/** A refund line's summary: its sale's record id, the sale line it refunds, and its quantity, amounts and time. */
const REFUND_SUMMARY_COLUMNS = `sale_id AS refund_sale_ref, sale_item_id AS refund_line_ref, quantity AS refund_quantity,
       net_amount AS refund_net, vat_amount AS refund_vat, gross_amount AS refund_gross, recorded_at AS refund_recorded_at`;

/** Every sale's summary as `alias` (sale_ref, sale_number, sale_created_at, sale_charge_code, sale_is_paid, sale_net, sale_vat, sale_gross, sale_refunded). */
export const saleSummaries = (alias: string): Sql => sql`(${SALE_SUMMARY}) ${sql.ident(alias)}`;

/** The summary of the sale `saleId` names, as `alias`: `JOIN ${saleById('s', ...)}`. */
export const saleById = (alias: string, saleId: Sql): Sql =>
  sql`${saleSummaries(alias)} ON ${sql.ident(alias, 'sale_ref')} = ${saleId}`;

/**
 * The line summaries (line_id, line_sale_ref, line_item_id, line_item_name, line_item_sku,
 * line_quantity, line_unit_price, line_net, line_vat, line_gross, line_refunded_quantity) of the
 * sale `saleId` names, as `alias`: `JOIN ${saleLinesOf('si', ...)}`.
 */
export const saleLinesOf = (alias: string, saleId: Sql): Sql =>
  sql`(${LINE_SUMMARY}) ${sql.ident(alias)} ON ${sql.ident(alias, 'line_sale_ref')} = ${saleId}`;

/** The same, as the source of a scalar subquery: `SELECT ... FROM ${linesOfSale('si', ...)}`. */
export const linesOfSale = (alias: string, saleId: Sql): Sql =>
  sql`(${LINE_SUMMARY}) ${sql.ident(alias)} WHERE ${sql.ident(alias, 'line_sale_ref')} = ${saleId}`;

/** The summary of the line `lineId` names, as `alias`: `JOIN ${saleLineById('si', ...)}`. */
export const saleLineById = (alias: string, lineId: Sql): Sql =>
  sql`(${LINE_SUMMARY}) ${sql.ident(alias)} ON ${sql.ident(alias, 'line_id')} = ${lineId}`;

/** The line summaries of the sale `saleId` one after another (an index scan per sale), as `alias`: `CROSS JOIN LATERAL ${...}`. */
export const saleLinesInOrder = (alias: string, saleId: Sql): Sql =>
  sql`(SELECT ${sql.raw(LINE_SUMMARY_COLUMNS)} FROM sale_items WHERE sale_id = ${saleId} ORDER BY id) ${sql.ident(alias)}`;

/** A line summary's (`alias`) refunded share of its net or gross amount, as the refund computed it (pro rata, half-up to 2 places). */
export const refundedShare = (alias: string, amount: 'line_net' | 'line_gross'): Sql =>
  sql`round(${sql.ident(alias, amount)} * ${sql.ident(alias, 'line_refunded_quantity')} / ${sql.ident(alias, 'line_quantity')}, 2)`;

/**
 * The refunded shares of the sales `saleIds` (a query of sale record ids) that have refunded lines:
 * per sale (sale_ref), the net (refunded_net) and gross (refunded_gross) refunded; the body of the
 * caller's CTE.
 */
export const refundedSharesOf = (saleIds: Sql): Sql =>
  sql`SELECT si.line_sale_ref AS sale_ref, sum(${refundedShare('si', 'line_net')}) AS refunded_net,
             sum(${refundedShare('si', 'line_gross')}) AS refunded_gross
        FROM (${LINE_SUMMARY}) si
       WHERE si.line_refunded_quantity > 0 AND si.line_sale_ref IN (${saleIds})
       GROUP BY si.line_sale_ref`;

/**
 * The summaries (refund_sale_ref, refund_line_ref, refund_quantity, refund_net, refund_vat,
 * refund_gross, refund_recorded_at) of the refund lines no batch has taken, recorded before
 * `before`, as `alias`: `FROM ${unbatchedRefundLines('r', before)}`.
 */
export const unbatchedRefundLines = (alias: string, before: Date): Sql =>
  sql`(SELECT ${sql.raw(REFUND_SUMMARY_COLUMNS)} FROM sale_refund_lines WHERE batch_id IS NULL AND recorded_at < ${before}) ${sql.ident(alias)}`;

/** The summaries of the refund lines of the sale `saleId` the batch took, as `alias`: `JOIN ${batchRefundLinesOf('r', ...)}`. */
export const batchRefundLinesOf = (alias: string, saleId: Sql, batchId: number): Sql =>
  sql`(SELECT ${sql.raw(REFUND_SUMMARY_COLUMNS)} FROM sale_refund_lines WHERE batch_id = ${batchId}) ${sql.ident(alias)}
        ON ${sql.ident(alias, 'refund_sale_ref')} = ${saleId}`;

/**
 * Marks the refund lines no batch has taken, recorded before `before`, as taken by `batchId`,
 * returning their summaries (as unbatchedRefundLines): the body of a CTE, so the batch's entries
 * are written in the same statement.
 */
export const claimRefundLines = (batchId: number, before: Date): Sql =>
  sql`UPDATE sale_refund_lines SET batch_id = ${batchId}
       WHERE batch_id IS NULL AND recorded_at < ${before}
      RETURNING ${sql.raw(REFUND_SUMMARY_COLUMNS)}`;

/** A sale as a lot's trace reads it (issue 42): who it went to, on which charge code. */
export type SaleRecipientRow = {
  id: number;
  sale_id: string;
  charge_code: string;
  delivered_to: string | null;
  delivered_to_email: string | null;
  created_at: Date;
};

/** The sales these sale numbers (SALE-...) name, by number: what a stock movement's reference links to. */
export async function salesByNumber(db: Db, saleNumbers: string[]): Promise<Map<string, SaleRecipientRow>> {
  if (saleNumbers.length === 0) return new Map();
  const rows: SaleRecipientRow[] = await db('sales')
    .whereIn('sale_id', [...new Set(saleNumbers)])
    .select('id', 'sale_id', 'charge_code', 'delivered_to', 'delivered_to_email', 'created_at');
  return new Map(rows.map((row) => [row.sale_id, row]));
}

/** The rows of sales, quotes and their lines that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const salesReferences: ReferenceCounters = {
  users: [
    { table: 'quotes', column: 'user_id', count: (id) => sql`SELECT count(*) FROM quotes WHERE user_id = ${id}` },
    {
      table: 'sale_idempotency_keys',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM sale_idempotency_keys WHERE user_id = ${id}`,
    },
    {
      table: 'sales',
      column: 'processed_by',
      count: (id) => sql`SELECT count(*) FROM sales WHERE processed_by = ${id}`,
    },
  ],
  items: [
    {
      table: 'quote_items',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM quote_items WHERE item_id = ${id}`,
    },
    {
      table: 'sale_items',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM sale_items WHERE item_id = ${id}`,
    },
  ],
};
