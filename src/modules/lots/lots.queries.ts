import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import type { ReferenceCounters } from '../../db/references';
import { sql, type Sql } from '../../db/sql';
import { D } from '../../lib/money';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { addDays, sellableQuantities, type LotMove, type WorkingLot } from './lots.picking';

/*
 * The lots module owns stock_lots (issue 42). Their quantities change only through the stock
 * ledger, which reads an item's lots under the item's lock (lockLotsOfItems), creates the lots a
 * change names for the first time (insertNewLots) and writes the lots' new quantities in its own
 * statement (lotUpdateSql), beside each movement's share of them (stock_movement_lots, the ledger's).
 */

export const EXPIRY_WARNING_SETTING = 'lots.expiryWarningDays';
export const DEFAULT_EXPIRY_WARNING_DAYS = 30;

/** Today in the stores' time zone, YYYY-MM-DD: a lot is expired from the day after its date. */
export const storesToday = (now: Date = new Date()): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(now);

/** How many days before its expiry a lot is `expiring` (setting lots.expiryWarningDays {days}, unset 30). */
export async function expiryWarningDays(db: Db): Promise<number> {
  const value = KNOWN_SETTINGS[EXPIRY_WARNING_SETTING].safeParse(await settingsService(db).get(EXPIRY_WARNING_SETTING));
  return value.success ? value.data.days : DEFAULT_EXPIRY_WARNING_DAYS;
}

export type LotRow = {
  id: number;
  item_id: number;
  lot_number: string;
  expires_on: string | null;
  quantity: string;
  received_at: Date;
  order_id: number | null;
  supplier_id: string | null;
  quarantined_at: Date | null;
  quarantine_reason: string | null;
  created_at: Date;
};

const LOT_COLUMNS =
  sql.raw(`l.id, l.item_id, l.lot_number, to_char(l.expires_on, 'YYYY-MM-DD') AS expires_on, l.quantity,
  l.received_at, l.order_id, l.supplier_id, l.quarantined_at, l.quarantine_reason, l.created_at`);

export const toWorkingLot = (row: LotRow): WorkingLot => ({
  id: row.id,
  itemId: row.item_id,
  lotNumber: row.lot_number,
  expiresOn: row.expires_on,
  quantity: new D(row.quantity),
  receivedAt: row.received_at,
  quarantined: row.quarantined_at !== null,
  orderId: row.order_id,
  supplierId: row.supplier_id,
});

/**
 * The lots of these items, locked FOR UPDATE in id order (the items are locked already, so this
 * waits only for a quarantine or release in flight), by item.
 */
export async function lockLotsOfItems(trx: Knex.Transaction, itemIds: number[]): Promise<Map<number, WorkingLot[]>> {
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    trx,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l WHERE l.item_id = ANY(${itemIds}::int[]) ORDER BY l.id FOR UPDATE`,
  );
  const byItem = new Map<number, WorkingLot[]>(itemIds.map((id) => [id, []]));
  for (const row of rows) byItem.get(row.item_id)!.push(toWorkingLot(row));
  return byItem;
}

/** What a sale may take of each of these lot-tracked items, and what their expired or quarantined lots hold (locked as lockLotsOfItems). */
export async function sellableLotStock(
  trx: Knex.Transaction,
  itemIds: number[],
): Promise<Map<number, { sellable: D; held: D }>> {
  if (itemIds.length === 0) return new Map();
  const today = storesToday();
  const lots = await lockLotsOfItems(trx, itemIds);
  return new Map([...lots].map(([itemId, itemLots]) => [itemId, sellableQuantities(itemLots, today)]));
}

/**
 * sellableLotStock read without a lock, for a figure that takes nothing (a request's short flag and
 * availability): the same rule (sellableQuantities), over the lots holding stock now.
 */
export async function sellableLotStockNow(db: Db, itemIds: number[]): Promise<Map<number, { sellable: D; held: D }>> {
  if (itemIds.length === 0) return new Map();
  const today = storesToday();
  const lots = await lotsHoldingStockOf(db, itemIds);
  return new Map([...lots].map(([itemId, itemLots]) => [itemId, sellableQuantities(itemLots, today)]));
}

/** Inserts the lots a change created (no id yet), empty; their ids are set on them. */
export async function insertNewLots(trx: Knex.Transaction, lots: WorkingLot[]): Promise<void> {
  const fresh = lots.filter((lot) => lot.id === null);
  if (fresh.length === 0) return;
  const rows = fresh.map((lot, position) => ({
    position,
    item_id: lot.itemId,
    lot_number: lot.lotNumber,
    expires_on: lot.expiresOn,
    order_id: lot.orderId,
    supplier_id: lot.supplierId,
  }));
  const { rows: inserted } = await preparedRaw<{ rows: { id: number; position: number }[] }>(
    trx,
    sql`WITH v AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
                     AS v(position int, item_id int, lot_number text, expires_on date, order_id int, supplier_id text)),
             inserted AS (
               INSERT INTO stock_lots (item_id, lot_number, expires_on, order_id, supplier_id)
               SELECT item_id, lot_number, expires_on, order_id, supplier_id FROM v ORDER BY position
               RETURNING id, item_id, lot_number)
        SELECT inserted.id, v.position FROM inserted JOIN v USING (item_id, lot_number)`,
  );
  for (const { id, position } of inserted) fresh[position].id = id;
}

/**
 * The lots' new quantities (and expiry: turning tracking on clears an empty UNLOTTED's) after a stock
 * change's moves, as the CTE `lot_update` of the ledger's statement. The text is fixed, the rows
 * travel as JSON; no moves, no rows.
 */
export function lotUpdateSql(moves: LotMove[]): Sql {
  const lots = [...new Map(moves.map(({ lot }) => [lot.id!, lot]))].map(([id, lot]) => ({
    id,
    quantity: lot.quantity.toFixed(2),
    expires_on: lot.expiresOn,
  }));
  return sql`lot_update AS (
        UPDATE stock_lots AS l SET quantity = v.quantity, expires_on = v.expires_on
          FROM jsonb_to_recordset(${JSON.stringify(lots)}::jsonb) AS v(id int, quantity numeric, expires_on date) WHERE l.id = v.id
      )`;
}

/**
 * The lots holding stock (issue 43: the hazard register) as `alias`, the read model another module's
 * statement joins, with the named columns lot_id, lot_item_id, lot_number, lot_quantity (text),
 * lot_expires_on (YYYY-MM-DD or null) and lot_quarantined.
 */
export const lotsHoldingStockRefs = (alias: string): Sql =>
  sql`(SELECT id AS lot_id, item_id AS lot_item_id, lot_number AS lot_number, quantity::text AS lot_quantity,
              to_char(expires_on, 'YYYY-MM-DD') AS lot_expires_on, quarantined_at IS NOT NULL AS lot_quarantined, received_at AS lot_received_at
         FROM stock_lots WHERE quantity > 0) ${sql.ident(alias)}`;

/** An item's lots, first expiry first (none last, then by receipt); the empty ones only when asked. */
export async function lotsOfItem(db: Db, itemId: number, includeEmpty: boolean): Promise<LotRow[]> {
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l
         WHERE l.item_id = ${itemId} AND (${includeEmpty}::boolean OR l.quantity > 0)
         ORDER BY l.expires_on NULLS LAST, l.received_at, l.id`,
  );
  return rows;
}

/**
 * The lots of these items that hold stock, by item (read without a lock: what a preview shows), and
 * those of `named` lot numbers whatever they hold (a basket line's named lot that ran out).
 */
export async function lotsHoldingStockOf(
  db: Db,
  itemIds: number[],
  named: string[] = [],
): Promise<Map<number, WorkingLot[]>> {
  const byItem = new Map<number, WorkingLot[]>(itemIds.map((id) => [id, []]));
  if (itemIds.length === 0) return byItem;
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l
         WHERE l.item_id = ANY(${itemIds}::int[]) AND (l.quantity > 0 OR l.lot_number = ANY(${named}::text[])) ORDER BY l.id`,
  );
  for (const row of rows) byItem.get(row.item_id)?.push(toWorkingLot(row));
  return byItem;
}

/** The lots of these (item, lot number) pairs that exist, whatever they hold, unlocked (issue 42: lines naming a lot). */
export async function lotsNamed(db: Db, named: { itemId: number; lotNumber: string }[]): Promise<WorkingLot[]> {
  if (named.length === 0) return [];
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l
          JOIN unnest(${named.map((n) => n.itemId)}::int[], ${named.map((n) => n.lotNumber)}::text[]) AS w(item_id, lot_number)
            ON w.item_id = l.item_id AND w.lot_number = l.lot_number
         ORDER BY l.id`,
  );
  return rows.map(toWorkingLot);
}

/** A lot as a label prints it: its item, number and expiry. */
export type LotForLabel = { id: number; itemId: number; lotNumber: string; expiresOn: string | null };

const toLotForLabel = (row: Pick<LotRow, 'id' | 'item_id' | 'lot_number' | 'expires_on'>): LotForLabel => ({
  id: row.id,
  itemId: row.item_id,
  lotNumber: row.lot_number,
  expiresOn: row.expires_on,
});

/** The lots of these ids, by id (ids of no lot left out): what POST /labels prints for `lots`. */
export async function lotsForLabels(db: Db, ids: number[]): Promise<Map<number, LotForLabel>> {
  if (ids.length === 0) return new Map();
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l WHERE l.id = ANY(${[...new Set(ids)]}::int[])`,
  );
  return new Map(rows.map((row) => [row.id, toLotForLabel(row)]));
}

/**
 * The lots an order's receipts put stock into: those first received on it (stock_lots.order_id: the
 * order's numeric id) and `alsoIds` (the ledger's: lots first received on another order that its
 * receipts added to), with what they hold now, in FEFO order by item: what the order's Print labels
 * offers after receiving.
 */
export async function lotsReceivedOnOrder(
  db: Db,
  orderId: number,
  alsoIds: number[] = [],
): Promise<(LotForLabel & { quantity: string })[]> {
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l WHERE l.order_id = ${orderId} OR l.id = ANY(${alsoIds}::int[])
         ORDER BY l.item_id, l.expires_on NULLS LAST, l.received_at, l.id`,
  );
  return rows.map((row) => ({ ...toLotForLabel(row), quantity: row.quantity }));
}

/** The id of the item's lot of this number (empty or not), undefined when the item has none. */
export async function lotIdByNumber(db: Db, itemId: number, lotNumber: string): Promise<number | undefined> {
  const { rows } = await preparedRaw<{ rows: { id: number }[] }>(
    db,
    sql`SELECT id FROM stock_lots WHERE item_id = ${itemId} AND lot_number = ${lotNumber}`,
  );
  return rows[0]?.id;
}

/** How many of the item's lots hold stock. */
export async function lotsHoldingStock(db: Db, itemId: number): Promise<number> {
  const { rows } = await preparedRaw<{ rows: { count: number }[] }>(
    db,
    sql`SELECT count(*)::int AS count FROM stock_lots WHERE item_id = ${itemId} AND quantity > 0`,
  );
  return rows[0].count;
}

/** A lot whose expiry status moved on since the digest last reported it: its status now. */
export type ExpiryChange = LotRow & { status: 'expiring' | 'expired' };

/**
 * The lots that hold stock (not quarantined: a quarantined lot is that, whatever its date) whose
 * status is `expiring` or `expired` on `today` and was not reported as such: never reported, or
 * reported `expiring` and now past its date. A range scan by expiry over the lots holding stock
 * (stock_lots_holding_by_expiry): what is read is what matters, however many lots there are.
 * Soonest first.
 */
export async function unreportedExpiryChanges(db: Db, today: string, warningDays: number): Promise<ExpiryChange[]> {
  const { rows } = await preparedRaw<{ rows: ExpiryChange[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS}, CASE WHEN l.expires_on < ${today}::date THEN 'expired' ELSE 'expiring' END AS status
          FROM stock_lots l
         WHERE l.quantity > 0 AND l.expires_on <= ${addDays(today, warningDays)}::date AND l.quarantined_at IS NULL
           AND (l.expiry_reported IS NULL OR (l.expiry_reported = 'expiring' AND l.expires_on < ${today}::date))
         ORDER BY l.expires_on, l.id`,
  );
  return rows;
}

/** Records the status each lot was reported in, so the next digest reports only what moved on. */
export async function markExpiryReported(db: Db, reported: { id: number; status: 'expiring' | 'expired' }[]) {
  if (reported.length === 0) return;
  await preparedRaw(
    db,
    sql`UPDATE stock_lots AS l SET expiry_reported = v.status
          FROM jsonb_to_recordset(${JSON.stringify(reported)}::jsonb) AS v(id int, status text) WHERE l.id = v.id`,
  );
}

/** The dashboard's expiry figures: lots expiring within the warning days, and expired lots still holding stock. */
export type ExpiryFigures = { warningDays: number; expiringLots: number; expiredLots: number };

/**
 * The dashboard's expiry figures on `today`, as the lots list counts its `expiring` and `expired`
 * lots (holding stock, not quarantined): one range scan by expiry over the partial index of the lots
 * holding stock (stock_lots_holding_by_expiry), up to the end of the warning days. It reads the lots
 * that are expired or expiring, never the rest, so it stays flat as the lots grow.
 */
export async function expiryFigures(db: Db, today: string, warningDays: number): Promise<ExpiryFigures> {
  const { rows } = await preparedRaw<{ rows: { expiring: number; expired: number }[] }>(
    db,
    sql`SELECT count(*) FILTER (WHERE l.expires_on >= ${today}::date)::int AS expiring,
               count(*) FILTER (WHERE l.expires_on < ${today}::date)::int AS expired
          FROM stock_lots l
         WHERE l.quantity > 0 AND l.expires_on <= ${addDays(today, warningDays)}::date AND l.quarantined_at IS NULL`,
  );
  return { warningDays, expiringLots: rows[0].expiring, expiredLots: rows[0].expired };
}

/** The rows of stock_lots that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const lotsReferences: ReferenceCounters = {
  items: [
    {
      table: 'stock_lots',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM stock_lots WHERE item_id = ${id}`,
    },
  ],
  suppliers: [
    {
      table: 'stock_lots',
      column: 'supplier_id',
      count: (id) => sql`SELECT count(*) FROM stock_lots WHERE supplier_id = ${id}`,
    },
  ],
  users: [
    {
      table: 'stock_lots',
      column: 'quarantined_by',
      count: (id) => sql`SELECT count(*) FROM stock_lots WHERE quarantined_by = ${id}`,
    },
  ],
};

/** The lots list's filters (GET /api/lots): lots holding stock, by status (none: expiring, expired and quarantined), of one item. */
export type LotsFilter = {
  status?: 'expiring' | 'expired' | 'quarantined';
  itemId?: number;
  today: string;
  warningDays: number;
};

/**
 * The condition of the lots list on `l`: holding stock (the partial indexes stock_lots_holding_by_expiry and,
 * for quarantined lots, stock_lots_quarantined_holding), and the status the rules of lotStatus give.
 */
function lotsFilterSql({ status, itemId, today, warningDays }: LotsFilter): Sql {
  const warnUntil = addDays(today, warningDays);
  const byStatus =
    status === 'quarantined'
      ? sql`l.quarantined_at IS NOT NULL`
      : status === 'expired'
        ? sql`l.expires_on < ${today}::date AND l.quarantined_at IS NULL`
        : status === 'expiring'
          ? sql`l.expires_on >= ${today}::date AND l.expires_on <= ${warnUntil}::date AND l.quarantined_at IS NULL`
          : sql`(l.expires_on <= ${warnUntil}::date OR l.quarantined_at IS NOT NULL)`;
  const byItem = itemId === undefined ? sql.raw('') : sql` AND l.item_id = ${itemId}`;
  return sql`l.quantity > 0 AND ${byStatus}${byItem}`;
}

/** A page of the lots list, soonest expiry first (no expiry last, then by id), and how many match. */
export async function lotsPage(
  db: Db,
  filter: LotsFilter,
  page: number,
  limit: number,
): Promise<{ rows: LotRow[]; total: number }> {
  const where = lotsFilterSql(filter);
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l WHERE ${where}
         ORDER BY l.expires_on NULLS LAST, l.id LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
  );
  const { rows: counted } = await preparedRaw<{ rows: { total: number }[] }>(
    db,
    sql`SELECT count(*)::int AS total FROM stock_lots l WHERE ${where}`,
  );
  return { rows, total: counted[0].total };
}

/** A lot, undefined when there is none; `lock`: FOR UPDATE, in the caller's transaction. */
export async function lotById(db: Db, id: number, { lock = false } = {}): Promise<LotRow | undefined> {
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    db,
    sql`SELECT ${LOT_COLUMNS} FROM stock_lots l WHERE l.id = ${id}${lock ? sql.raw(' FOR UPDATE') : sql.raw('')}`,
  );
  return rows[0];
}

/** Quarantines the lot (a sale never takes it then), or releases it (`quarantine` null); the lot as it is after. */
export async function setLotQuarantine(
  trx: Knex.Transaction,
  id: number,
  quarantine: { reason: string; by: string | null } | null,
): Promise<LotRow> {
  const { rows } = await preparedRaw<{ rows: LotRow[] }>(
    trx,
    quarantine
      ? sql`UPDATE stock_lots l SET quarantined_at = now(), quarantine_reason = ${quarantine.reason}, quarantined_by = ${quarantine.by}
             WHERE l.id = ${id} RETURNING ${LOT_COLUMNS}`
      : sql`UPDATE stock_lots l SET quarantined_at = NULL, quarantine_reason = NULL, quarantined_by = NULL
             WHERE l.id = ${id} RETURNING ${LOT_COLUMNS}`,
  );
  return rows[0];
}
