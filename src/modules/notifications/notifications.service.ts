import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import { BadRequest, NotFound } from '../../http/errors';
import {
  lowStockItemRefs,
  lowStockQuery,
  lowStockState,
  queriedItem,
  stockLevelQuery,
  type LowStockItem,
} from '../items/items.queries';
import { lastMovementId, movedAbove } from '../stock-movements/stock-movements.queries';
import type { ReferenceCounters } from '../../db/references';

/**
 * An acknowledgement `a` counts only for the current low-stock episode of its item (`itemId`, with
 * `minimumStock`): once a movement after it lifts the item above its minimum, it is stale and the
 * next episode starts unacknowledged.
 */
const currentAck = (itemId: Sql, minimumStock: Sql) =>
  sql`a.item_id = ${itemId} AND NOT ${movedAbove(itemId, sql.raw('a.last_movement_id'), minimumStock)}`;

/** currentAck over the items module's low-stock and stock-level queries. */
const VALID_ACK = currentAck(queriedItem.id, queriedItem.minimumStock);

/** currentAck over lowStockItemRefs as `l`. */
const CURRENT_LOW_ACK = currentAck(sql.raw('l.item_id'), sql.raw('l.item_minimum_stock'));

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
      const item = await lowStockState(db, itemId);
      if (!item) throw NotFound('Item not found');
      if (!item.low) throw BadRequest(`Item '${item.name}' is not low on stock; there is nothing to acknowledge`);
      await toRaw(
        db,
        sql`INSERT INTO low_stock_acknowledgements (item_id, last_movement_id, acknowledged_at, acknowledged_by, cleared_at)
         VALUES (${itemId}, ${lastMovementId(sql`${itemId}`)}, now(), ${userId}, NULL)
         ON CONFLICT (item_id) DO UPDATE SET last_movement_id = excluded.last_movement_id, acknowledged_at = excluded.acknowledged_at,
           acknowledged_by = excluded.acknowledged_by, cleared_at = NULL`,
      );
      const row: AlertRow = await withAcknowledgement(stockLevelQuery(db, itemId)).first();
      return toAlert(row);
    },

    /** Hides every acknowledged current alert; drops acknowledgements of finished episodes. Answers how many it hid. */
    async clearAcknowledged(): Promise<number> {
      const { rowCount } = await toRaw<{ rowCount: number }>(
        db,
        sql`UPDATE low_stock_acknowledgements a SET cleared_at = now()
              FROM ${lowStockItemRefs('l')} WHERE ${CURRENT_LOW_ACK} AND a.cleared_at IS NULL`,
      );
      await toRaw(
        db,
        sql`DELETE FROM low_stock_acknowledgements a
             WHERE NOT EXISTS (SELECT 1 FROM ${lowStockItemRefs('l')} WHERE ${CURRENT_LOW_ACK})`,
      );
      return rowCount;
    },
  };
}

/** The rows of low-stock acknowledgements that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const notificationsReferences: ReferenceCounters = {
  users: [
    {
      table: 'low_stock_acknowledgements',
      column: 'acknowledged_by',
      count: (id) => sql`SELECT count(*) FROM low_stock_acknowledgements WHERE acknowledged_by = ${id}`,
    },
  ],
  items: [
    {
      table: 'low_stock_acknowledgements',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM low_stock_acknowledgements WHERE item_id = ${id}`,
    },
  ],
};
