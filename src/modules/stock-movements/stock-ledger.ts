import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { inTransaction } from '../../db/knex';
import { BadRequest, NotFound } from '../../http/errors';
import { D, type DecimalInput } from '../../lib/money';

export type MovementType = 'in' | 'out' | 'adjustment';

export type StockChange = {
  itemId: number;
  type: MovementType;
  /** in/out: how many (> 0); adjustment: the new stock level (>= 0) */
  quantity: string | number;
  reason: string;
  performedBy: string | null;
  /** what caused the change, e.g. {type: 'sale', id: 'SALE-20261121-1'} */
  reference?: { type: string; id: string };
};

export type MovementRow = {
  id: number;
  item_id: number | null;
  item_name: string;
  item_sku: string;
  type: MovementType;
  quantity: string;
  previous_stock: string;
  new_stock: string;
  reason: string;
  reference_type: string | null;
  reference_id: string | null;
  performed_by: string | null;
  created_at: Date;
};

export const insufficientStockMessage = (itemName: string, current: DecimalInput, required: DecimalInput) =>
  `Insufficient stock for item '${itemName}'. Current stock: ${new D(current).toString()}, Required: ${new D(required).toString()}`;

/**
 * Locks item rows in ascending id order. Every path that changes several items locks them
 * this way first, so concurrent multi-item changes queue instead of deadlocking.
 * FOR NO KEY UPDATE (not FOR UPDATE): stock changes never touch the key, and this lock does not
 * conflict with the KEY SHARE locks that foreign-key checks take when another transaction
 * inserts a row referencing an item (quote or order lines), which otherwise deadlock with it.
 */
export type LockedItem = { id: number; name: string; sku: string; current_stock: string; category_id: number; is_active: boolean };

export async function lockItemsForStock(trx: Knex.Transaction, itemIds: number[]): Promise<Map<number, LockedItem>> {
  const ids = [...new Set(itemIds)].sort((a, b) => a - b);
  const rows = await trx('items')
    .whereIn('id', ids)
    .orderBy('id')
    .forNoKeyUpdate()
    .select<LockedItem[]>('id', 'name', 'sku', 'current_stock', 'category_id', 'is_active');
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The one function that changes stock. It locks the item, computes the new level,
 * refuses to go below zero, updates the item and appends the movement, all in one
 * transaction (the caller's, when it passes one).
 */
export async function changeStock(db: Db, change: StockChange): Promise<MovementRow> {
  const [movement] = await changeStockMany(db, [change]);
  return movement;
}

const MOVEMENT_INSERT_CHUNK = 1000;

/**
 * changeStock for many changes at once (bulk import, bulk set-zero): the same rules, one
 * lock statement (ascending id order), one UPDATE and batched movement inserts, all in one
 * transaction. Changes apply in the order given, so two changes to one item chain; any
 * refused change (negative result, unknown item) aborts the whole batch.
 * A caller that has just locked the items with lockItemsForStock in this same transaction
 * passes what it read, which saves locking them a second time.
 */
export function changeStockMany(db: Db, changes: StockChange[], lockedInThisTransaction?: Map<number, LockedItem>): Promise<MovementRow[]> {
  return inTransaction(db, async (trx) => {
    if (changes.length === 0) return [];
    for (const change of changes) {
      const quantity = new D(change.quantity);
      if (change.type === 'adjustment' ? quantity.isNegative() : quantity.lte(0)) {
        throw BadRequest(
          change.type === 'adjustment' ? 'Stock cannot be adjusted to a negative value' : 'Quantity must be greater than zero',
        );
      }
    }
    const itemIds = changes.map((c) => c.itemId);
    const items =
      lockedInThisTransaction && itemIds.every((id) => lockedInThisTransaction.has(id))
        ? lockedInThisTransaction
        : await lockItemsForStock(trx, itemIds);
    const levels = new Map<number, D>();
    const movements: Omit<MovementRow, 'id' | 'created_at'>[] = [];
    for (const change of changes) {
      const item = items.get(change.itemId);
      if (!item) throw NotFound('Item not found');
      const quantity = new D(change.quantity);
      const previous = levels.get(item.id) ?? new D(item.current_stock);
      const next =
        change.type === 'in' ? previous.plus(quantity) : change.type === 'out' ? previous.minus(quantity) : quantity;
      if (next.isNegative()) throw BadRequest(insufficientStockMessage(item.name, previous, quantity));
      levels.set(item.id, next);
      movements.push({
        item_id: item.id,
        item_name: item.name,
        item_sku: item.sku,
        type: change.type,
        quantity: next.minus(previous).toFixed(2),
        previous_stock: previous.toFixed(2),
        new_stock: next.toFixed(2),
        reason: change.reason,
        reference_type: change.reference?.type ?? null,
        reference_id: change.reference?.id ?? null,
        performed_by: change.performedBy,
      });
    }

    // The stock update rides along with the first movement insert: one round trip, one statement.
    const updates = [...levels.entries()];
    const updateItems = trx.raw(
      `UPDATE items AS i SET current_stock = v.stock, updated_at = now()
         FROM (VALUES ${updates.map(() => '(?::int, ?::numeric)').join(', ')}) AS v(id, stock)
        WHERE i.id = v.id`,
      updates.flatMap(([id, level]) => [id, level.toFixed(2)]),
    );
    const written: MovementRow[] = [];
    for (let i = 0; i < movements.length; i += MOVEMENT_INSERT_CHUNK) {
      const insert = trx<MovementRow>('stock_movements')
        .insert(movements.slice(i, i + MOVEMENT_INSERT_CHUNK))
        .returning('*');
      let rows: MovementRow[];
      if (i === 0) {
        const [update, movementInsert] = [updateItems.toSQL(), insert.toSQL()];
        const sql = `WITH stock_update AS (${update.sql}) ${movementInsert.sql}`;
        rows = (await trx.raw(sql, [...update.bindings, ...movementInsert.bindings])).rows;
      } else {
        rows = await insert;
      }
      written.push(...rows.sort((a, b) => a.id - b.id));
    }
    return written;
  });
}
