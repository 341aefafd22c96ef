import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/** Whether the sale (by its record id) exists (a note's reference). */
export async function saleExists(db: Db, id: number): Promise<boolean> {
  return (await db('sales').where({ id }).first('id')) !== undefined;
}

/** How many sales are on the charge code (a code in use is never deleted). */
export async function salesOnChargeCode(db: Db, code: string): Promise<number> {
  const [{ count }] = await db('sales').where({ charge_code: code }).count<{ count: number }[]>('* as count');
  return count;
}

/*
 * The sales module's fragments for the archives' statements over thousands of sales at once
 * (write, measure, lock, plan, delete): `alias` is the caller's name for a row of sales.
 */

/** The sales table as `alias`, the owner's fragment for the archives' statements. */
export const salesAs = (alias: string): Sql => sql`sales ${sql.ident(alias)}`;

/** The sale `alias` as stored (every column) with its lines (`items`, whole rows in id order), as jsonb. */
export const saleWithLinesJson = (alias: string): Sql =>
  sql`to_jsonb(${sql.ident(alias)}) || jsonb_build_object('items', coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.id) FROM sale_items l WHERE l.sale_id = ${sql.ident(alias, 'id')}), '[]'))`;

/** Part of the sale `alias` is refunded, part not. */
export const salePartiallyRefunded = (alias: string): Sql => sql`${sql.ident(alias, 'status')} = 'partially_refunded'`;

/** The sale `alias` is owed: not paid, and not wholly refunded. */
export const saleUnpaid = (alias: string): Sql =>
  sql`NOT ${sql.ident(alias, 'is_paid')} AND ${sql.ident(alias, 'status')} <> 'refunded'`;

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
