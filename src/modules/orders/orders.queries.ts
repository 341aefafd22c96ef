import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import { invoiceMetadataJson } from '../invoices/invoices.queries';
import { supplierRefs } from '../suppliers/suppliers.queries';
import type { ReferenceCounters } from '../../db/references';

/**
 * The owner's fragment for a cross-module statement: per item of those `itemIdsQuery` selects, the
 * outstanding quantity (ordered - received) on its pending and partly received order lines, as
 * rows (on_order_item_id, on_order); an item with none has no row.
 */
export const onOrderSql = (itemIdsQuery: Sql): Sql =>
  sql`SELECT li.item_id AS on_order_item_id, sum(li.quantity - li.received_quantity) AS on_order
            FROM order_items li
            JOIN orders o ON o.id = li.order_id
           WHERE o.status IN ('pending', 'partially_received') AND li.item_id IN (${itemIdsQuery})
           GROUP BY li.item_id`;

/** The orders these order numbers name (a stock movement's reference), with their supplier's name, by number. */
export async function ordersByNumber(
  db: Db,
  orderNumbers: string[],
): Promise<Map<string, { id: number; order_id: string; supplier_name: string | null }>> {
  if (orderNumbers.length === 0) return new Map();
  const { rows } = await toRaw<{ rows: { id: number; order_id: string; supplier_name: string | null }[] }>(
    db,
    sql`SELECT o.id, o.order_id, s.supplier_name FROM orders o
          LEFT JOIN ${supplierRefs('s')} ON s.supplier_id = o.supplier_id
         WHERE o.order_id = ANY(${[...new Set(orderNumbers)]}::text[])`,
  );
  return new Map(rows.map((row) => [row.order_id, row]));
}

/** Whether the order exists. */
export async function orderExists(db: Db, id: number): Promise<boolean> {
  return (await db('orders').where({ id }).first('id')) !== undefined;
}

/**
 * The orders module's part of an archive (the archives module): `records` is every order as the
 * archive reads it, a subquery of named columns: `id`, `created_at`, `reference` (its number, as
 * stock movements name it), `record` (the row whole as PostgreSQL stores it, to_jsonb, with its
 * lines as `items` and its invoice's metadata as `invoice`, never the PDF's bytes) and the reason a
 * purge keeps it (`not_fully_received`: pending or partly received). `lock` and `purge` take the
 * orders of the caller's query of ids, in the caller's transaction.
 */
export const ordersArchive = {
  records: sql`(SELECT o.id, o.created_at, o.order_id AS reference,
                       to_jsonb(o) || jsonb_build_object(
                         'items', coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.id) FROM order_items l WHERE l.order_id = o.id), '[]'),
                         'invoice', ${invoiceMetadataJson(sql.raw('o.id'))}) AS record,
                       o.status IN ('pending', 'partially_received') AS not_fully_received
                  FROM orders o)`,
  /** Locks the orders in id order, as a receipt locks its order. */
  async lock(trx: Knex.Transaction, ids: Sql): Promise<void> {
    await toRaw(
      trx,
      sql`SELECT count(*) FROM (SELECT id FROM orders WHERE id IN (${ids}) ORDER BY id FOR UPDATE) locked`,
    );
  },
  /** Deletes the orders (their lines and invoices with them); how many. */
  async purge(trx: Knex.Transaction, ids: Sql): Promise<number> {
    return (await toRaw<{ rowCount: number }>(trx, sql`DELETE FROM orders WHERE id IN (${ids})`)).rowCount;
  },
};

/** The rows of orders and their lines that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const ordersReferences: ReferenceCounters = {
  users: [
    { table: 'orders', column: 'created_by', count: (id) => sql`SELECT count(*) FROM orders WHERE created_by = ${id}` },
  ],
  items: [
    {
      table: 'order_items',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM order_items WHERE item_id = ${id}`,
    },
  ],
  suppliers: [
    {
      table: 'orders',
      column: 'supplier_id',
      count: (id) => sql`SELECT count(*) FROM orders WHERE supplier_id = ${id}`,
    },
  ],
};
