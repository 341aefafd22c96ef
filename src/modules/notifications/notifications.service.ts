import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { BadRequest, NotFound } from '../../http/errors';
import { LOW_STOCK_CONDITION, lowStockQuery, type LowStockItem } from '../items/items.low-stock';

/**
 * An acknowledgement counts only for the current low-stock episode: once a movement after it
 * lifts the item above its minimum, it is stale and the next episode starts unacknowledged.
 */
const VALID_ACK = sql.raw(`a.item_id = i.id AND NOT EXISTS (
  SELECT 1 FROM stock_movements m
   WHERE m.item_id = i.id AND m.id > coalesce(a.last_movement_id, 0) AND m.new_stock > i.minimum_stock)`);

/** An item's low-stock alert: the item as the low-stock list reads it, and its acknowledgement, if current. */
export type LowStockAlert = Pick<LowStockItem, 'id' | 'name' | 'sku' | 'currentStock' | 'minimumStock'> & {
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
};

type AlertRow = {
  id: number;
  name: string;
  sku: string;
  current_stock: string;
  minimum_stock: string;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
};

const toAlert = (r: AlertRow): LowStockAlert => ({
  id: r.id,
  name: r.name,
  sku: r.sku,
  currentStock: r.current_stock,
  minimumStock: r.minimum_stock,
  acknowledgedAt: r.acknowledged_at,
  acknowledgedBy: r.acknowledged_by,
});

export function lowStockNotificationsService(db: Db) {
  /** Adds the item's current acknowledgement (if any) to a query over `items i`. */
  const withAcknowledgement = (query: Knex.QueryBuilder) =>
    query
      .leftJoin('low_stock_acknowledgements as a', (join) => join.on(toRaw(db, VALID_ACK)))
      .select('a.acknowledged_at', 'a.acknowledged_by');

  return {
    /** Current alerts (the items module's low-stock query, out of stock first), minus acknowledged ones that were cleared. */
    async list(): Promise<LowStockAlert[]> {
      const rows: AlertRow[] = await withAcknowledgement(lowStockQuery(db, 'outOfStockFirst')).whereNull(
        'a.cleared_at',
      );
      return rows.map(toAlert);
    },

    async acknowledge(itemId: number, userId: string): Promise<LowStockAlert> {
      const item = await db('items as i')
        .where('i.id', itemId)
        .first('i.name', toRaw(db, sql`(${LOW_STOCK_CONDITION}) AS low`));
      if (!item) throw NotFound('Item not found');
      if (!item.low) throw BadRequest(`Item '${item.name}' is not low on stock; there is nothing to acknowledge`);
      await db.raw(
        `INSERT INTO low_stock_acknowledgements (item_id, last_movement_id, acknowledged_at, acknowledged_by, cleared_at)
         VALUES (?, (SELECT max(id) FROM stock_movements WHERE item_id = ?), now(), ?, NULL)
         ON CONFLICT (item_id) DO UPDATE SET last_movement_id = excluded.last_movement_id, acknowledged_at = excluded.acknowledged_at,
           acknowledged_by = excluded.acknowledged_by, cleared_at = NULL`,
        [itemId, itemId, userId],
      );
      const row: AlertRow = await withAcknowledgement(db('items as i').where('i.id', itemId)).first(
        'i.id',
        'i.name',
        'i.sku',
        'i.current_stock',
        'i.minimum_stock',
      );
      return toAlert(row);
    },

    /** Hides every acknowledged current alert; drops acknowledgements of finished episodes. Answers how many it hid. */
    async clearAcknowledged(): Promise<number> {
      const { rowCount } = await toRaw<{ rowCount: number }>(
        db,
        sql`UPDATE low_stock_acknowledgements a SET cleared_at = now()
              FROM items i WHERE ${VALID_ACK} AND a.cleared_at IS NULL AND ${LOW_STOCK_CONDITION}`,
      );
      await toRaw(
        db,
        sql`DELETE FROM low_stock_acknowledgements a USING items i WHERE a.item_id = i.id AND NOT (${VALID_ACK} AND ${LOW_STOCK_CONDITION})`,
      );
      return rowCount;
    },
  };
}
