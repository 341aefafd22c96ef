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
 */
export async function lockItemsForStock(
  trx: Knex.Transaction,
  itemIds: number[],
): Promise<Map<number, { id: number; name: string; sku: string; current_stock: string }>> {
  const ids = [...new Set(itemIds)].sort((a, b) => a - b);
  const rows = await trx('items')
    .whereIn('id', ids)
    .orderBy('id')
    .forUpdate()
    .select<{ id: number; name: string; sku: string; current_stock: string }[]>('id', 'name', 'sku', 'current_stock');
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The one function that changes stock. It locks the item, computes the new level,
 * refuses to go below zero, updates the item and appends the movement, all in one
 * transaction (the caller's, when it passes one).
 */
export function changeStock(db: Db, change: StockChange): Promise<MovementRow> {
  return inTransaction(db, async (trx) => {
    const quantity = new D(change.quantity);
    if (change.type === 'adjustment' ? quantity.isNegative() : quantity.lte(0)) {
      throw BadRequest(
        change.type === 'adjustment' ? 'Stock cannot be adjusted to a negative value' : 'Quantity must be greater than zero',
      );
    }
    const item = (await lockItemsForStock(trx, [change.itemId])).get(change.itemId);
    if (!item) throw NotFound('Item not found');

    const previous = new D(item.current_stock);
    const next =
      change.type === 'in' ? previous.plus(quantity) : change.type === 'out' ? previous.minus(quantity) : quantity;
    if (next.isNegative()) throw BadRequest(insufficientStockMessage(item.name, previous, quantity));

    await trx('items').where({ id: item.id }).update({ current_stock: next.toFixed(2), updated_at: trx.fn.now() });
    const [movement] = await trx<MovementRow>('stock_movements')
      .insert({
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
      })
      .returning('*');
    return movement;
  });
}
