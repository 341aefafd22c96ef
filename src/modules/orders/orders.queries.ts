import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';
import { invoiceMetadataJson } from '../invoices/invoices.queries';

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

/** Whether the order exists. */
export async function orderExists(db: Db, id: number): Promise<boolean> {
  return (await db('orders').where({ id }).first('id')) !== undefined;
}

/** The owner's fragment for a cross-module statement: the orders table under the caller's alias. */
export const ordersAs = (alias: string): Sql => sql`orders ${sql.ident(alias)}`;

/**
 * The owner's fragment for a cross-module statement (the archives): the order row `alias` whole, as
 * jsonb (to_jsonb: every column as stored), with its lines (`items`) and its invoice's metadata
 * (`invoice`, never the PDF's bytes).
 */
export const orderRecordJson = (alias: string): Sql => {
  const r = sql.ident(alias);
  return sql`to_jsonb(${r}) || jsonb_build_object(
      'items', coalesce((SELECT jsonb_agg(to_jsonb(l) ORDER BY l.id) FROM order_items l WHERE l.order_id = ${r}.id), '[]'),
      'invoice', ${invoiceMetadataJson(sql`${r}.id`)})`;
};
