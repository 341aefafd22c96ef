import type { Db } from '../../db/knex';
import { BadRequest, NotFound } from '../../http/errors';
import { quantityNumber } from '../../lib/money';
import { LOW_STOCK_CONDITION } from '../dashboard/dashboard.service';

/**
 * An acknowledgement counts only for the current low-stock episode: once a movement after it
 * lifts the item above its minimum, it is stale and the next episode starts unacknowledged.
 */
const VALID_ACK = `a.item_id = i.id AND NOT EXISTS (
  SELECT 1 FROM stock_movements m
   WHERE m.item_id = i.id AND m.id > coalesce(a.last_movement_id, 0) AND m.new_stock > i.minimum_stock)`;

type NotificationRow = {
  id: number;
  name: string;
  sku: string;
  current_stock: string;
  minimum_stock: string;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
};

export type LowStockNotification = {
  itemId: number;
  itemName: string;
  sku: string;
  currentStock: number;
  minimumStock: number;
  type: 'out_of_stock' | 'low_stock';
  level: 'critical' | 'warning';
  message: string;
  acknowledged: boolean;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
};

export function presentNotification(r: NotificationRow): LowStockNotification {
  const out = quantityNumber(r.current_stock) === 0;
  const current = quantityNumber(r.current_stock);
  const minimum = quantityNumber(r.minimum_stock);
  return {
    itemId: r.id,
    itemName: r.name,
    sku: r.sku,
    currentStock: current,
    minimumStock: minimum,
    type: out ? 'out_of_stock' : 'low_stock',
    level: out ? 'critical' : 'warning',
    message: out ? `'${r.name}' is out of stock (minimum ${minimum})` : `'${r.name}' is low on stock: ${current} left, minimum ${minimum}`,
    acknowledged: r.acknowledged_at !== null,
    acknowledgedAt: r.acknowledged_at ? r.acknowledged_at.toISOString() : null,
    acknowledgedBy: r.acknowledged_by,
  };
}

const SELECT = `SELECT i.id, i.name, i.sku, i.current_stock, i.minimum_stock, a.acknowledged_at, a.acknowledged_by
  FROM items i LEFT JOIN low_stock_acknowledgements a ON ${VALID_ACK}`;

export function lowStockNotificationsService(db: Db) {
  return {
    /** Current alerts (active items at or below minimum), minus acknowledged ones that were cleared. Out of stock first. */
    async list(): Promise<LowStockNotification[]> {
      const { rows } = await db.raw<{ rows: NotificationRow[] }>(
        `${SELECT} WHERE ${LOW_STOCK_CONDITION} AND a.cleared_at IS NULL
          ORDER BY i.current_stock = 0 DESC, i.current_stock - i.minimum_stock, i.name, i.id`,
      );
      return rows.map(presentNotification);
    },

    async acknowledge(itemId: number, userId: string): Promise<LowStockNotification> {
      const item = await db('items as i').where('i.id', itemId).first('i.name', db.raw(`(${LOW_STOCK_CONDITION}) AS low`));
      if (!item) throw NotFound('Item not found');
      if (!item.low) throw BadRequest(`Item '${item.name}' is not low on stock; there is nothing to acknowledge`);
      await db.raw(
        `INSERT INTO low_stock_acknowledgements (item_id, last_movement_id, acknowledged_at, acknowledged_by, cleared_at)
         VALUES (?, (SELECT max(id) FROM stock_movements WHERE item_id = ?), now(), ?, NULL)
         ON CONFLICT (item_id) DO UPDATE SET last_movement_id = excluded.last_movement_id, acknowledged_at = excluded.acknowledged_at,
           acknowledged_by = excluded.acknowledged_by, cleared_at = NULL`,
        [itemId, itemId, userId],
      );
      const { rows } = await db.raw<{ rows: NotificationRow[] }>(`${SELECT} WHERE i.id = ?`, [itemId]);
      return presentNotification(rows[0]);
    },

    /** Hides every acknowledged current alert; drops acknowledgements of finished episodes. */
    async clearAcknowledged(): Promise<number> {
      const { rowCount } = await db.raw<{ rowCount: number }>(
        `UPDATE low_stock_acknowledgements a SET cleared_at = now()
           FROM items i WHERE ${VALID_ACK} AND a.cleared_at IS NULL AND ${LOW_STOCK_CONDITION}`,
      );
      await db.raw(
        `DELETE FROM low_stock_acknowledgements a USING items i WHERE a.item_id = i.id AND NOT (${VALID_ACK} AND ${LOW_STOCK_CONDITION})`,
      );
      return rowCount;
    },
  };
}
