import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { BadRequest, NotFound } from '../../http/errors';
import { D, type DecimalInput } from '../../lib/money';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';
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

/** An item as the ledger reads it under its lock: what a movement records of it, and the level it starts from. */
export type StockItem = { id: number; name: string; sku: string; current_stock: string };

/**
 * The items' side of a stock change. The items module owns the item rows and implements it
 * (`itemStock`, items.queries.ts); the caller hands it to the ledger. So the ledger imports nothing
 * of items, and items (its stock endpoint and bulk changes go through the ledger) imports the
 * ledger without a cycle.
 */
export type ItemStock = {
  /** Locks the items of these ids in ascending id order (FOR NO KEY UPDATE); the locked items by id. */
  lock(trx: Knex.Transaction, ids: number[]): Promise<Map<number, StockItem>>;
  /** The UPDATE that sets locked items' stock to these levels (a CTE of the ledger's statement). */
  setLevelsSql(levels: { id: number; stock: string }[]): Sql;
  /**
   * The items of `before` (each with its stock before the change) that the change took from above
   * their minimum to at or below it, as the stock.low event's data; read in the change's transaction.
   */
  crossedLow(trx: Knex.Transaction, before: { id: number; stock: string }[]): Promise<unknown[]>;
};

export const insufficientStockMessage = (itemName: string, current: DecimalInput, required: DecimalInput) =>
  `Insufficient stock for item '${itemName}'. Current stock: ${new D(current).toString()}, Required: ${new D(required).toString()}`;

/** The ledger's writes as SQL: the CTEs `stock_update` and `movements` (RETURNING *) of one WITH list. */
export type StockWrites = Sql;

/** A stock change's one statement: the ledger's writes, and what the caller records beside them. */
export type StockStatement = (writes: StockWrites) => Sql;

const movementsOnly: StockStatement = (writes) => sql`WITH ${writes} SELECT * FROM movements ORDER BY id`;

/**
 * The one function that changes stock; every stock change (the item's stock endpoint, a sale, a
 * refund, a receipt, a stocktake's post, a bulk change or import) comes through it, in the caller's
 * transaction, against `locked`: the items as locked in this transaction before the change (the
 * items module's lock, ascending id order). It applies the ledger's rules: quantities positive (an
 * adjustment's target not negative), changes in the order given (two changes to one item chain), no
 * level below zero (400 naming the item), unknown item 404. It writes the stock and the signed
 * movements in one statement, `statement` when the caller records its own rows in the same round
 * trip (a sale and its lines: `WITH ${writes}, ... SELECT ...`; by default the movements, oldest
 * first), and then publishes a stock.low event for each item the change took to its minimum or
 * below. The answer is the statement's rows.
 */
export async function writeStockChanges<Row = MovementRow>(
  trx: Knex.Transaction,
  {
    itemStock,
    locked,
    changes,
    statement = movementsOnly,
  }: {
    itemStock: ItemStock;
    locked: ReadonlyMap<number, StockItem>;
    changes: StockChange[];
    statement?: StockStatement;
  },
): Promise<Row[]> {
  const { rows } = await preparedRaw<{ rows: Row[] }>(trx, statement(stockWrites(itemStock, changes, locked)));
  await publishEvents(trx, 'stock.low', () =>
    itemStock.crossedLow(
      trx,
      [...locked.values()].map((item) => ({ id: item.id, stock: item.current_stock })),
    ),
  );
  return rows;
}

/** writeStockChanges' rules applied to the changes: the stock update and the movements, as the CTEs of one WITH list. */
function stockWrites(itemStock: ItemStock, changes: StockChange[], items: ReadonlyMap<number, StockItem>): StockWrites {
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
        ${itemStock.setLevelsSql(newLevels)}
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
 * writeStockChanges with its own lock: one lock statement (ascending id order) and one statement for
 * every update and movement, in one transaction; any refused change aborts the whole batch. Opened
 * here (no caller's transaction), the transaction is retried whole on a deadlock or lock timeout
 * (`retry`); in a caller's transaction the caller's helper retries the whole of it.
 */
export function changeStockMany(db: Db, itemStock: ItemStock, changes: StockChange[]): Promise<MovementRow[]> {
  return transaction(db, { retry: true }, async (trx) => {
    if (changes.length === 0) return [];
    const locked = await itemStock.lock(
      trx,
      changes.map((c) => c.itemId),
    );
    return writeStockChanges(trx, { itemStock, locked, changes });
  });
}

/** changeStockMany for one change: its movement. */
export async function changeStock(db: Db, itemStock: ItemStock, change: StockChange): Promise<MovementRow> {
  const [movement] = await changeStockMany(db, itemStock, [change]);
  return movement;
}
