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

/** The tables of sales and of their lines, for another module's statement that reads whole ranges of them (archives, recharges). */
/** The sales table as `alias`, the owner's fragment for a cross-module statement. */
export const salesAs = (alias: string): Sql => sql`sales ${sql.ident(alias)}`;
/** The sale lines table as `alias`, the owner's fragment for a cross-module statement. */
export const saleLinesAs = (alias: string): Sql => sql`sale_items ${sql.ident(alias)}`;

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
 * The sales module's fragments for the finance recharges, which read sales with their lines and
 * refund lines in one statement: the batch close claims the refund lines and writes its entries
 * in one, and the reports stream the lines of thousands of sales. `alias` is the caller's name.
 */

/** sale_items as `alias`: the lines of the sale `saleId` names. */
export const saleLinesOf = (alias: string, saleId: Sql): Sql =>
  sql`sale_items ${sql.ident(alias)} ON ${sql.ident(alias, 'sale_id')} = ${saleId}`;

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
