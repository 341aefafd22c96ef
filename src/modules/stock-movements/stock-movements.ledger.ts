import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { BadRequest, NotFound } from '../../http/errors';
import { D, type DecimalInput } from '../../lib/money';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';
import {
  lockedById,
  lockItemsByIdsSql,
  lowStockCrossed,
  setStockLevelsSql,
  type LockedItem,
} from '../items/items.queries';
import { publishEvents } from '../outbound-webhooks/outbound-webhooks.queries';

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

/** Locks the items for a stock change, the items module's way (lockItemsByIdsSql: ascending id order). */
export async function lockItemsForStock(trx: Knex.Transaction, itemIds: number[]): Promise<Map<number, LockedItem>> {
  const { rows } = await preparedRaw<{ rows: LockedItem[] }>(trx, lockItemsByIdsSql(itemIds));
  return lockedById(rows);
}

/** Stock changes as SQL: the CTEs `stock_update` and `movements` (RETURNING *) of one WITH list, with their bindings. */
export type StockWrites = Sql;

/**
 * The ledger's rules, applied to changes against items locked in this transaction: quantities
 * positive (an adjustment's target not negative), changes applied in the order given (two
 * changes to one item chain), no level below zero (400 naming the item), unknown item 404.
 * The result is the stock update and the signed movements as CTEs of one statement, so a caller
 * that records its own rows (a sale and its lines) writes them in the same round trip.
 */
export function stockWrites(changes: StockChange[], items: Map<number, LockedItem>): StockWrites {
  const levels = new Map<number, D>();
  const movements = changes.map((change, position) => {
    const quantity = new D(change.quantity);
    if (change.type === 'adjustment' ? quantity.isNegative() : quantity.lte(0)) {
      throw BadRequest(
        change.type === 'adjustment'
          ? 'Stock cannot be adjusted to a negative value'
          : 'Quantity must be greater than zero',
      );
    }
    const item = items.get(change.itemId);
    if (!item) throw NotFound('Item not found');
    const previous = levels.get(item.id) ?? new D(item.current_stock);
    const next =
      change.type === 'in' ? previous.plus(quantity) : change.type === 'out' ? previous.minus(quantity) : quantity;
    if (next.isNegative()) throw BadRequest(insufficientStockMessage(item.name, previous, quantity));
    levels.set(item.id, next);
    return {
      position,
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
    };
  });
  const newLevels = [...levels].map(([id, level]) => ({ id, stock: level.toFixed(2) }));
  // Fixed text whatever the number of changes (the rows travel as JSON), so it prepares once.
  return sql`stock_update AS (
        ${setStockLevelsSql(newLevels)}
      ), movements AS (
        INSERT INTO stock_movements (item_id, item_name, item_sku, type, quantity, previous_stock, new_stock, reason, reference_type, reference_id, performed_by)
        SELECT m.item_id, m.item_name, m.item_sku, m.type, m.quantity, m.previous_stock, m.new_stock, m.reason, m.reference_type, m.reference_id, m.performed_by
          FROM jsonb_to_recordset(${JSON.stringify(movements)}::jsonb) AS m(position int, item_id int, item_name text, item_sku text, type text, quantity numeric,
               previous_stock numeric, new_stock numeric, reason text, reference_type text, reference_id text, performed_by uuid)
         ORDER BY m.position
        RETURNING *
      )`;
}

/**
 * After a stock change in this transaction: a stock.low event for each item it took from above its
 * minimum to at or below it (items.queries' one low-stock rule), `locked` being the items as locked
 * before the change. Every caller of stockWrites calls it after running the writes; changeStockMany does.
 */
export async function publishLowStockCrossings(trx: Knex.Transaction, locked: Map<number, LockedItem>): Promise<void> {
  await publishEvents(trx, 'stock.low', () =>
    lowStockCrossed(
      trx,
      [...locked.values()].map((item) => ({ id: item.id, stock: item.current_stock })),
    ),
  );
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

/**
 * changeStock for many changes at once (bulk import, receipts, bulk set-zero): one lock statement
 * (ascending id order) and one statement for every update and movement (stockWrites), in one
 * transaction; any refused change aborts the whole batch. Opened here (no caller's transaction),
 * the transaction is retried whole on a deadlock or lock timeout (`retry`); in a
 * caller's transaction the caller's helper retries the whole of it.
 */
export function changeStockMany(db: Db, changes: StockChange[]): Promise<MovementRow[]> {
  return transaction(db, { retry: true }, async (trx) => {
    if (changes.length === 0) return [];
    const locked = await lockItemsForStock(
      trx,
      changes.map((c) => c.itemId),
    );
    const { rows } = await preparedRaw<{ rows: MovementRow[] }>(
      trx,
      sql`WITH ${stockWrites(changes, locked)} SELECT * FROM movements ORDER BY id`,
    );
    await publishLowStockCrossings(trx, locked);
    return rows;
  });
}
