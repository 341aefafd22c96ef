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

/**
 * A sale's summary, the read model another module's statement reads whole ranges of sales through
 * (the finance recharges): every sale as `alias`, with the named columns sale_ref (its record id),
 * sale_number (SALE-...), sale_created_at, sale_charge_code, sale_is_paid, sale_net, sale_vat,
 * sale_gross and sale_refunded (the amounts as sold, and the gross refunded so far). A plain
 * projection, so PostgreSQL plans it as the table itself (its indexes on created_at and charge_code).
 */
export const saleSummaries = (alias: string): Sql =>
  sql`(SELECT id AS sale_ref, sale_id AS sale_number, created_at AS sale_created_at, charge_code AS sale_charge_code,
              is_paid AS sale_is_paid, subtotal_amount AS sale_net, vat_amount AS sale_vat, total_amount AS sale_gross,
              refunded_amount AS sale_refunded FROM sales) ${sql.ident(alias)}`;

/**
 * The refunded shares of the sales `saleIds` (a query of sale record ids) that have refunded lines:
 * per sale (sale_ref), the net (refunded_net) and gross (refunded_gross) refunded, each line's share
 * as the refund computed it (refundedShare); the body of the caller's CTE.
 */
export const refundedSharesOf = (saleIds: Sql): Sql =>
  sql`SELECT si.sale_id AS sale_ref, sum(${refundedShare('si', 'subtotal')}) AS refunded_net,
             sum(${refundedShare('si', 'total_with_vat')}) AS refunded_gross
        FROM sale_items si
       WHERE si.refunded_quantity > 0 AND si.sale_id IN (${saleIds})
       GROUP BY si.sale_id`;

/** The sale `alias` as stored (every column) with its lines (`items`, whole rows in id order), as jsonb. */
export const saleWithLinesJson = (alias: string): Sql =>
  sql`to_jsonb(${sql.ident(alias)}) || jsonb_build_object('items', coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.id) FROM sale_items l WHERE l.sale_id = ${sql.ident(alias, 'id')}), '[]'))`;

/** Part of the sale `alias` is refunded, part not. */
export const salePartiallyRefunded = (alias: string): Sql => sql`${sql.ident(alias, 'status')} = 'partially_refunded'`;

/** The sale `alias` is owed: not paid, and not wholly refunded. */
export const saleUnpaid = (alias: string): Sql =>
  sql`NOT ${sql.ident(alias, 'is_paid')} AND ${sql.ident(alias, 'status')} <> 'refunded'`;

/*
 * The sales module's fragments for the finance recharges, which read sales with their lines and
 * refund lines in one statement: the batch close claims the refund lines and writes its entries
 * in one, and the reports stream the lines of thousands of sales. `alias` is the caller's name.
 */

/** sale_items as `alias`: the lines of the sale `saleId` names. */
export const saleLinesOf = (alias: string, saleId: Sql): Sql =>
  sql`sale_items ${sql.ident(alias)} ON ${sql.ident(alias, 'sale_id')} = ${saleId}`;

/** sale_items as `alias`, only the lines of the sale `saleId`: the source of a scalar subquery (`SELECT ... FROM ${...}`). */
export const linesOfSale = (alias: string, saleId: Sql): Sql =>
  sql`sale_items ${sql.ident(alias)} WHERE ${sql.ident(alias, 'sale_id')} = ${saleId}`;

/** sale_items as `alias`: the line `lineId` names. */
export const saleLineById = (alias: string, lineId: Sql): Sql =>
  sql`sale_items ${sql.ident(alias)} ON ${sql.ident(alias, 'id')} = ${lineId}`;

/** sales as `alias`: the sale `saleId` names. */
export const saleById = (alias: string, saleId: Sql): Sql =>
  sql`sales ${sql.ident(alias)} ON ${sql.ident(alias, 'id')} = ${saleId}`;

/** The lines of the sale `saleId` one after another (an index scan per sale), as `alias`: `CROSS JOIN LATERAL ${...}`. */
export const saleLinesInOrder = (alias: string, saleId: Sql): Sql =>
  sql`(SELECT * FROM sale_items ${sql.ident(alias)} WHERE ${sql.ident(alias, 'sale_id')} = ${saleId} ORDER BY ${sql.ident(alias, 'id')}) ${sql.ident(alias)}`;

/** A line's (`alias`) refunded share of one of its amounts, as the refund computed it (pro rata, half-up to 2 places). */
export const refundedShare = (alias: string, column: 'subtotal' | 'total_with_vat'): Sql =>
  sql`round(${sql.ident(alias, column)} * ${sql.ident(alias, 'refunded_quantity')} / ${sql.ident(alias, 'quantity')}, 2)`;

/** The refund lines no batch has taken, recorded before `before`, as `alias`: `FROM ${unbatchedRefundLines('r', before)}`. */
export const unbatchedRefundLines = (alias: string, before: Date): Sql =>
  sql`(SELECT * FROM sale_refund_lines WHERE batch_id IS NULL AND recorded_at < ${before}) ${sql.ident(alias)}`;

/** sale_refund_lines as `alias`: those of the sale `saleId` the batch took. */
export const batchRefundLinesOf = (alias: string, saleId: Sql, batchId: number): Sql =>
  sql`sale_refund_lines ${sql.ident(alias)} ON ${sql.ident(alias, 'sale_id')} = ${saleId} AND ${sql.ident(alias, 'batch_id')} = ${batchId}`;

/**
 * Marks the refund lines no batch has taken, recorded before `before`, as taken by `batchId`,
 * returning them (sale_id, sale_item_id, quantity, net_amount, vat_amount, gross_amount,
 * recorded_at): the body of a CTE, so the batch's entries are written in the same statement.
 */
export const claimRefundLines = (batchId: number, before: Date): Sql =>
  sql`UPDATE sale_refund_lines SET batch_id = ${batchId}
       WHERE batch_id IS NULL AND recorded_at < ${before}
      RETURNING sale_id, sale_item_id, quantity, net_amount, vat_amount, gross_amount, recorded_at`;
