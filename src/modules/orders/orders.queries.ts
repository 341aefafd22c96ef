import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';

/**
 * The owner's fragment for a cross-module statement: per item of those `itemIdsQuery` selects, the
 * outstanding quantity (ordered - received) on its pending and partly received order lines, as
 * rows (item_id, on_order); an item with none has no row.
 */
export const onOrderSql = (itemIdsQuery: Sql): Sql =>
  sql`SELECT li.item_id, sum(li.quantity - li.received_quantity) AS on_order
            FROM order_items li
            JOIN orders o ON o.id = li.order_id
           WHERE o.status IN ('pending', 'partially_received') AND li.item_id IN (${itemIdsQuery})
           GROUP BY li.item_id`;

/** Whether the order exists. */
export async function orderExists(db: Db, id: number): Promise<boolean> {
  return (await db('orders').where({ id }).first('id')) !== undefined;
}
