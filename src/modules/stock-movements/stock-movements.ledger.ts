import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { BadRequest, NotFound } from '../../http/errors';
import { D, type DecimalInput } from '../../lib/money';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';
import { publishEvents } from '../outbound-webhooks/outbound-webhooks.queries';
import {
  moveLots,
  notTrackedByLotMessage,
  startTrackingMoves,
  stopTrackingMoves,
  type LotChange,
  type LotMove,
  type NamedLot,
  type WorkingLot,
} from '../lots/lots.picking';
import { insertNewLots, lockLotsOfItems, lotUpdateSql, storesToday } from '../lots/lots.queries';

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
  /**
   * A lot-tracked item's lot (issue 42): `in` adds to it (created when new), `out` takes from it,
   * `adjustment` sets it (the quantity is the lot's new level). Required but for a sale's `out`
   * (first-expiry-first-out) and a refund's `in` (returnTo).
   */
  lot?: NamedLot;
  /** `out` for a sale: only lots neither expired nor quarantined, first expiry first when no lot is named */
  sale?: boolean;
  /** `in` for a refund: back into the lots the sale took (lot id, how many it took), the latest-expiring first */
  returnTo?: { lotId: number; quantity: string }[];
  /**
   * Tracking by lot turned on (`start`) or off (`stop`) for the item (issue 42): an `adjustment` to the
   * level it has (quantity: its current stock) that moves only its lots, so its movement's quantity is
   * 0 and its lots explain the move: `start` puts the stock no lot holds into UNLOTTED, `stop` empties
   * the lots. The changes after it in the same call follow the item's new tracking.
   */
  lotTracking?: 'start' | 'stop';
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
export type StockItem = {
  id: number;
  name: string;
  sku: string;
  current_stock: string;
  tracking: 'none' | 'lot';
  shelf_life_days: number | null;
};

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
  // an item tracked by lot, or turning tracking on or off, has its lots read under its lock
  const lotTracking = new Set(changes.filter((c) => c.lotTracking).map((c) => c.itemId));
  const tracked = [...new Set(changes.map((c) => c.itemId))].filter(
    (id) => locked.get(id)?.tracking === 'lot' || lotTracking.has(id),
  );
  const lots = tracked.length > 0 ? await lockLotsOfItems(trx, tracked) : new Map<number, WorkingLot[]>();
  const plan = planStockChanges(changes, locked, lots);
  await insertNewLots(trx, [...lots.values()].flat());
  const { rows } = await preparedRaw<{ rows: Row[] }>(trx, statement(stockWrites(itemStock, plan)));
  await publishEvents(trx, 'stock.low', () =>
    itemStock.crossedLow(
      trx,
      [...locked.values()].map((item) => ({ id: item.id, stock: item.current_stock })),
    ),
  );
  return rows;
}

type PlannedMovement = {
  position: number;
  item_id: number;
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
};

type StockPlan = {
  movements: PlannedMovement[];
  levels: { id: number; stock: string }[];
  lotMoves: { position: number; moves: LotMove[] }[];
};

/**
 * writeStockChanges' rules applied to the changes, in order: quantities positive (an adjustment's
 * target not negative), no level below zero, unknown item 404; a lot-tracked item's change moves
 * its lots (`lots`, read under its lock) by the lot rules (lots.picking.ts), and its level moves by
 * what they moved; turning tracking on or off moves its lots and leaves its level.
 */
function planStockChanges(
  changes: StockChange[],
  items: ReadonlyMap<number, StockItem>,
  lots: Map<number, WorkingLot[]>,
): StockPlan {
  const today = lots.size > 0 ? storesToday() : '';
  const levels = new Map<number, D>();
  const lotTracked = new Map<number, boolean>();
  const lotMoves: StockPlan['lotMoves'] = [];
  const movements = changes.map((change, position): PlannedMovement => {
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
    const tracksLots = lotTracked.get(item.id) ?? item.tracking === 'lot';
    const lotItem = { id: item.id, name: item.name, sku: item.sku, shelfLifeDays: item.shelf_life_days };
    let next: D;
    if (change.lotTracking) {
      if (change.type !== 'adjustment' || !quantity.eq(previous) || (change.lotTracking === 'start') === tracksLots)
        throw new Error(
          `Turning tracking by lot ${change.lotTracking === 'start' ? 'on' : 'off'} keeps ${item.sku}'s level`,
        );
      const itemLots = lots.get(item.id)!;
      const moves =
        change.lotTracking === 'start'
          ? startTrackingMoves(lotItem, itemLots, previous, today)
          : stopTrackingMoves(itemLots);
      lotMoves.push({ position, moves });
      lotTracked.set(item.id, change.lotTracking === 'start');
      next = previous;
    } else if (tracksLots) {
      const moves = moveLots(lotItem, lots.get(item.id)!, lotChangeOf(change, quantity), {
        today,
        shortMessage: (available, suffix) => insufficientStockMessage(item.name, available, quantity) + suffix,
      });
      lotMoves.push({ position, moves });
      next = moves.reduce((level, move) => level.plus(move.quantity), previous);
    } else {
      if (change.lot) throw BadRequest(notTrackedByLotMessage(item.sku));
      next =
        change.type === 'in' ? previous.plus(quantity) : change.type === 'out' ? previous.minus(quantity) : quantity;
    }
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
  return { movements, levels: [...levels].map(([id, level]) => ({ id, stock: level.toFixed(2) })), lotMoves };
}

/** A change as the lot rules take it. */
function lotChangeOf(change: StockChange, quantity: D): LotChange {
  if (change.type === 'in') {
    const returnTo = change.returnTo?.map((source) => ({ lotId: source.lotId, quantity: new D(source.quantity) }));
    return { type: 'in', quantity, lot: change.lot, returnTo };
  }
  if (change.type === 'out') return { type: 'out', quantity, lot: change.lot, sale: change.sale ?? false };
  return { type: 'adjustment', quantity, lot: change.lot };
}

/** The plan as the CTEs of one WITH list: the stock update, the movements (`movement_rows` numbers them first) and the lots. */
function stockWrites(itemStock: ItemStock, { movements, levels, lotMoves }: StockPlan): StockWrites {
  // Fixed text whatever the number of changes (the rows travel as JSON), so it prepares once.
  return sql`stock_update AS (
        ${itemStock.setLevelsSql(levels)}
      ), movement_rows AS MATERIALIZED (
        SELECT m.*, nextval('stock_movements_id_seq'::regclass)::int AS id
          FROM (SELECT * FROM jsonb_to_recordset(${JSON.stringify(movements)}::jsonb) AS m(position int, item_id int, item_name text, item_sku text, type text,
                  quantity numeric, previous_stock numeric, new_stock numeric, reason text, reference_type text, reference_id text, performed_by uuid)
                 ORDER BY m.position) AS m
      ), movements AS (
        INSERT INTO stock_movements (id, item_id, item_name, item_sku, type, quantity, previous_stock, new_stock, reason, reference_type, reference_id, performed_by)
        SELECT m.id, m.item_id, m.item_name, m.item_sku, m.type, m.quantity, m.previous_stock, m.new_stock, m.reason, m.reference_type, m.reference_id, m.performed_by
          FROM movement_rows m
         ORDER BY m.position
        RETURNING *
      ), ${lotUpdateSql(lotMoves.flatMap((m) => m.moves))}, movement_lots AS (
        INSERT INTO stock_movement_lots (movement_id, lot_id, lot_number, expires_on, quantity)
        SELECT r.id, s.lot_id, s.lot_number, s.expires_on, s.quantity
          FROM jsonb_to_recordset(${JSON.stringify(lotShares(lotMoves))}::jsonb)
               AS s(position int, lot_id int, lot_number text, expires_on date, quantity numeric)
          JOIN movement_rows r ON r.position = s.position
      )`;
}

/** Each movement's share of each lot it moved, by the movement's position in the change. */
const lotShares = (lotMoves: StockPlan['lotMoves']) =>
  lotMoves.flatMap(({ position, moves }) =>
    moves.map(({ lot, quantity }) => ({
      position,
      lot_id: lot.id,
      lot_number: lot.lotNumber,
      expires_on: lot.expiresOn,
      quantity: quantity.toFixed(2),
    })),
  );

/**
 * What the movements of a reference (a sale) still hold of each lot of an item: what they took
 * less what came back (refunds), by lot; a refund puts stock back into these (StockChange.returnTo).
 */
export async function lotsTakenBy(
  trx: Knex.Transaction,
  reference: { type: string; id: string },
  itemId: number,
): Promise<{ lotId: number; quantity: string }[]> {
  const { rows } = await preparedRaw<{ rows: { lot_id: number; quantity: string }[] }>(
    trx,
    sql`SELECT ml.lot_id, (-sum(ml.quantity))::text AS quantity
          FROM stock_movements m JOIN stock_movement_lots ml ON ml.movement_id = m.id
         WHERE m.reference_type = ${reference.type} AND m.reference_id = ${reference.id} AND m.item_id = ${itemId}
           AND ml.lot_id IS NOT NULL
         GROUP BY ml.lot_id HAVING sum(ml.quantity) < 0`,
  );
  return rows.map((row) => ({ lotId: row.lot_id, quantity: row.quantity }));
}

/**
 * How much the movements of a reference (an order's receipts) put into each lot, less what they
 * took back, by lot id: an order's lot labels are one a unit received.
 */
export async function lotsReceivedBy(db: Db, reference: { type: string; id: string }): Promise<Map<number, string>> {
  const { rows } = await preparedRaw<{ rows: { lot_id: number; quantity: string }[] }>(
    db,
    sql`SELECT ml.lot_id, sum(ml.quantity)::text AS quantity
          FROM stock_movements m JOIN stock_movement_lots ml ON ml.movement_id = m.id
         WHERE m.reference_type = ${reference.type} AND m.reference_id = ${reference.id} AND ml.lot_id IS NOT NULL
         GROUP BY ml.lot_id HAVING sum(ml.quantity) > 0`,
  );
  return new Map(rows.map((row) => [row.lot_id, row.quantity]));
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
