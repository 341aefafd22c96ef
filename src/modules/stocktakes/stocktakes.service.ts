import type { Knex } from 'knex';
import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql, toRaw, type Sql } from '../../db/sql';
import { transaction } from '../../db/transaction';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../http/errors';
import { UnknownItemCode } from '../items/items.unknown-code';
import { parseGs1 } from '../../lib/gs1';
import {
  fefoOrder,
  lotExpiryMismatch,
  lotNumberRequiredMessage,
  notTrackedByLotMessage,
  type WorkingLot,
} from '../lots/lots.picking';
import { lockLotsOfItems, lotsOfItem } from '../lots/lots.queries';
import { D } from '../../lib/money';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { categoryBuyers, missingCategoryIds } from '../categories/categories.queries';
import {
  itemExists,
  itemIdForCode,
  itemIdsInScopeSql,
  itemRefs,
  itemsDueForCount,
  itemStock,
  lockItemsForStock,
  markItemsCounted,
  missingItemIds,
  type ItemDueForCount,
} from '../items/items.queries';
import { writeStockChanges, type StockChange } from '../stock-movements/stock-movements.ledger';
import { publishEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { leftJoinUserRef, userRefSelect } from '../users/users.queries';
import type {
  CountBody,
  CountMode,
  CreateStocktake,
  StocktakeListQuery,
  StocktakeScope,
  StocktakeStatus,
  UncountedChoice,
} from './stocktakes.schemas';

/*
 * Stocktakes (issue 31): a count of some or all items, taken while sales go on.
 *
 * - create: one line per item in scope, all uncounted (expected null).
 * - count: `add` (default) adds to the line's count, `set` replaces it; the line's `expected` is the
 *   item's stock when the line is first counted (read in the count's transaction). A `set` is a
 *   recount of what is on the shelf now, so it takes the stock again as expected (a sale made
 *   between the first count and the recount is then neither counted twice nor undone). An item outside
 *   the scope becomes a `found` line. Each scan is kept in stocktake_counts (who, how many, the
 *   line's count before and after), so a scan can be undone: undoCount takes back what that scan
 *   changed (the line's count minus the scan's change, i.e. an `add` of 3 takes 3 off, a `set` from
 *   5 to 10 takes 5 off), keeping later scans, and a set's undo restores the expected before it
 *   (unless a later set took it again); a line whose every scan is undone is uncounted again (a
 *   found line disappears).
 * - post: one transaction with the stocktake row locked FOR UPDATE (a second post waits, then finds
 *   it posted: 409). Each counted line's variance (counted - expected) is applied to the item's
 *   CURRENT stock as one `adjustment` movement (reason `Stocktake <reference>`), so a sale made
 *   between the count and the posting stays: stock after = counted - sold since the count. A line
 *   whose result would be below zero (more sold since the count than were counted) refuses the post
 *   (409 naming the item: recount it).
 * - Counting takes the stocktake row FOR KEY SHARE (counts run side by side; posting or cancelling
 *   waits for them, and counts after it find it closed: 409), and the line row FOR UPDATE, so two
 *   people adding to the same item are both summed.
 */

export type StocktakeRow = {
  id: number;
  reference: string;
  name: string | null;
  status: StocktakeStatus;
  blind: boolean;
  scope: StocktakeScope;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  uncounted: UncountedChoice | null;
  posted_by: string | null;
  posted_at: Date | null;
  cancelled_by: string | null;
  cancelled_at: Date | null;
};

type UserRefColumns<P extends string> = {
  [K in `${P}email` | `${P}first_name` | `${P}last_name`]: string | null;
};

/** A stocktake as read for the API: with who created, posted or cancelled it, and its line counts. */
export type StocktakeReadRow = StocktakeRow &
  UserRefColumns<'creator_'> &
  UserRefColumns<'poster_'> &
  UserRefColumns<'canceller_'> & { lines_total: number; lines_counted: number };

/** A line as read: its item's SKU and name, and the price valuing its variance (fixed once posted). */
export type StocktakeLineRow = {
  id: number;
  item_id: number;
  sku: string;
  name: string;
  /** a lot-tracked item's line of one lot (issue 42); null: the item's line */
  lot_number: string | null;
  /** the expiry the lot's scan carried (YYYY-MM-DD), for the lot posting creates; else the lot's own */
  lot_expires_on: string | null;
  found: boolean;
  expected: string | null;
  counted: string | null;
  unit_price: string;
  counted_by: string | null;
  counted_at: Date | null;
} & UserRefColumns<'counter_'>;

export type StocktakeCountRow = {
  id: number;
  stocktake_id: number;
  item_id: number;
  sku: string;
  name: string;
  lot_number: string | null;
  mode: CountMode;
  quantity: string;
  previous_counted: string | null;
  new_counted: string;
  previous_expected: string | null;
  new_expected: string;
  counted_by: string | null;
  counted_at: Date;
  undone_at: Date | null;
} & UserRefColumns<'counter_'>;

export type StocktakeTotals = {
  linesTotal: number;
  linesCounted: number;
  linesFound: number;
  itemsWithVariance: number;
  /** the net sum of variance x unit price, a decimal string */
  varianceValue: string;
};

/** The review's line filters: every line, the counted, the uncounted, the counted with a variance. */
export const LINE_FILTERS = ['all', 'counted', 'uncounted', 'variance'] as const;
export type LineFilter = (typeof LINE_FILTERS)[number];
const LINE_FILTER_SQL: Record<LineFilter, Sql> = {
  all: sql`true`,
  counted: sql`l.counted IS NOT NULL`,
  uncounted: sql`l.counted IS NULL`,
  variance: sql`l.counted <> l.expected`,
};

export type StocktakeDetail = { stocktake: StocktakeReadRow; lines: StocktakeLineRow[]; totals: StocktakeTotals };

export type PostOutcome = {
  reference: string;
  itemsCounted: number;
  itemsAdjusted: number;
  varianceValue: string;
  movements: number;
};

export type Suggestion = ItemDueForCount & { category_name: string };

/** A line's variance (counted - expected), null until counted. */
export const varianceOf = (line: Pick<StocktakeLineRow, 'expected' | 'counted'>): D | null =>
  line.counted === null || line.expected === null ? null : new D(line.counted).minus(line.expected);

export function totalsOf(lines: StocktakeLineRow[]): StocktakeTotals {
  let linesCounted = 0;
  let linesFound = 0;
  let itemsWithVariance = 0;
  let value = new D(0);
  for (const line of lines) {
    if (line.found) linesFound += 1;
    const variance = varianceOf(line);
    if (variance === null) continue;
    linesCounted += 1;
    if (!variance.isZero()) {
      itemsWithVariance += 1;
      value = value.plus(variance.times(line.unit_price));
    }
  }
  return { linesTotal: lines.length, linesCounted, linesFound, itemsWithVariance, varianceValue: value.toFixed(2) };
}

const STOCKTAKE_SELECT = sql`SELECT s.*, ${userRefSelect('creator_')}, ${userRefSelect('poster_')}, ${userRefSelect('canceller_')},
       (SELECT count(*)::int FROM stocktake_lines l WHERE l.stocktake_id = s.id) AS lines_total,
       (SELECT count(*)::int FROM stocktake_lines l WHERE l.stocktake_id = s.id AND l.counted IS NOT NULL) AS lines_counted
  FROM stocktakes s
  ${leftJoinUserRef('creator_', sql.raw('s.created_by'))}
  ${leftJoinUserRef('poster_', sql.raw('s.posted_by'))}
  ${leftJoinUserRef('canceller_', sql.raw('s.cancelled_by'))}`;

// The item's and the counter's columns are the items and users modules' read models (itemRefs, leftJoinUserRef).
const LINE_SELECT = sql`SELECT l.id, l.item_id, item_sku AS sku, item_name AS name, l.lot_number,
       to_char(l.lot_expires_on, 'YYYY-MM-DD') AS lot_expires_on, l.found, l.expected, l.counted,
       coalesce(l.unit_price, item_price) AS unit_price, l.counted_by, l.counted_at, ${userRefSelect('counter_')}
  FROM stocktake_lines l
  JOIN ${itemRefs('item_ref')} ON item_ref.item_id = l.item_id
  ${leftJoinUserRef('counter_', sql.raw('l.counted_by'))}`;

const COUNT_SELECT = sql`SELECT c.*, item_sku AS sku, item_name AS name, ${userRefSelect('counter_')}
  FROM stocktake_counts c
  JOIN ${itemRefs('item_ref')} ON item_ref.item_id = c.item_id
  ${leftJoinUserRef('counter_', sql.raw('c.counted_by'))}`;

const STOCKTAKE_NOT_FOUND = 'Stocktake not found';

/** The 409 for a change to a stocktake that is no longer open. */
/** A stocktake takes counts, and may be posted or cancelled, while it is open: the service's checks and the pages' buttons. */
export const takesCounts = (status: StocktakeStatus): boolean => status === 'open';

function closed(head: { reference: string; status: StocktakeStatus }, what: string) {
  return Conflict(`Stocktake ${head.reference} is ${head.status}: ${what}`);
}

const list = (ids: number[]) => [...new Set(ids)].join(', ');

/** Stocktakes: create, read, count, undo a count, post, cancel, report, and the cycle-count suggestions. */
/**
 * Whose scans a person may undo or change: their own, or (a manager) anyone's. Ten people count one
 * stocktake; a scan taken back by someone else would change a count its counter still trusts.
 */
export type ScanRights = { anyonesScans: boolean };

/** Who runs stocktakes (starts, reviews, posts and cancels them): the API's access of those routes, and the pages'. */
export const STOCKTAKE_MANAGERS = 'manager' satisfies Role;

/** Whether this person runs stocktakes (the API's guard of those routes, and the pages' review links and buttons). */
export const managesStocktakes = (user: Express.User): boolean => hasRole(user, STOCKTAKE_MANAGERS);

/** A signed-in person's ScanRights: a manager may undo or change anyone's scan. */
export const scanRightsOf = (user: Express.User): ScanRights => ({ anyonesScans: managesStocktakes(user) });

/** Whether this person sees a stocktake's expected figures and variances: on a blind one, only who runs stocktakes. */
export const seesExpected = (user: Express.User, blind: boolean): boolean => !blind || managesStocktakes(user);

function refuseOthersScan(scan: { counted_by: string | null }, actor: Actor, rights: ScanRights, verb: string) {
  if (!rights.anyonesScans && scan.counted_by !== actor.userId)
    throw Forbidden(`Only the person who scanned it or a manager can ${verb} a scan`);
}

/** The lot a scan carries: a GS1 element string with its (01) GTIN and (10) lot, and its (17) expiry. */
function scannedLot(code: string | undefined): { lotNumber: string; expiresOn: string | null } | undefined {
  if (code === undefined) return undefined;
  const parsed = parseGs1(code);
  if (!parsed.ok || parsed.gtin === undefined || parsed.lotNumber === undefined) return undefined;
  return { lotNumber: parsed.lotNumber, expiresOn: parsed.expiresOn ?? null };
}

/**
 * The lot a count of this item names (issue 42): none for an item not tracked by lot (a GS1 scan's
 * lot is then of no account; a lotNumber sent is 400); for a tracked one, `lotNumber` or the lot its
 * GS1 scan carries (400 "Lot number is required for <SKU>" without either), with the expiry to keep
 * for the lot (the lot's own when the item has it: a scan's other expiry is 409) and the lot's
 * quantity now, the expected of its first count (0 for a lot the item does not have yet).
 */
async function lotOfCount(
  db: Db,
  itemId: number,
  body: CountBody,
): Promise<{ lotNumber: string | null; lotExpiresOn: string | null; lotLevel: string | null }> {
  const {
    rows: [item],
  } = await preparedRaw<{ rows: { sku: string; tracking: 'none' | 'lot' }[] }>(
    db,
    sql`SELECT item_sku AS sku, item_tracking AS tracking FROM ${itemRefs('item_ref')} WHERE item_ref.item_id = ${itemId}`,
  );
  if (item.tracking !== 'lot') {
    if (body.lotNumber !== undefined) throw BadRequest(notTrackedByLotMessage(item.sku));
    return { lotNumber: null, lotExpiresOn: null, lotLevel: null };
  }
  const scanned = scannedLot(body.code);
  if (scanned && body.lotNumber !== undefined && scanned.lotNumber !== body.lotNumber)
    throw BadRequest(`The scan carries lot ${scanned.lotNumber}, not ${body.lotNumber}`);
  const lotNumber = body.lotNumber ?? scanned?.lotNumber;
  if (lotNumber === undefined) throw BadRequest(lotNumberRequiredMessage(item.sku));
  const expiresOn = body.expiresOn ?? scanned?.expiresOn ?? null;
  const known = (await lotsOfItem(db, itemId, true)).find((lot) => lot.lot_number === lotNumber);
  if (known && expiresOn !== null && known.expires_on !== null && known.expires_on !== expiresOn)
    throw lotExpiryMismatch(item.sku, { lotNumber, expiresOn: known.expires_on }, expiresOn);
  return {
    lotNumber,
    lotExpiresOn: known ? known.expires_on : expiresOn,
    lotLevel: known ? new D(known.quantity).toFixed(2) : '0.00',
  };
}

/** A line as posting reads it. */
type PostedLine = {
  id: number;
  item_id: number;
  lot_number: string | null;
  lot_expires_on: string | null;
  expected: string | null;
  counted: string | null;
  counted_at: Date | null;
};

/**
 * Posting with uncounted lines zeroed (issue 42): every lot of a lot-tracked item that holds stock
 * and has no line is given one, uncounted, so it is zeroed as the item's uncounted line would be
 * (the item's own line, when it is still the item's, becomes its first such lot's). Answers the lines
 * added.
 */
async function linesForUncountedLots(
  trx: Knex.Transaction,
  stocktakeId: number,
  lines: PostedLine[],
  lots: Map<number, WorkingLot[]>,
): Promise<PostedLine[]> {
  const added: PostedLine[] = [];
  for (const [itemId, itemLots] of lots) {
    const itemLines = lines.filter((l) => l.item_id === itemId);
    const lined = new Set(itemLines.map((l) => l.lot_number));
    const missing = itemLots.filter((lot) => lot.quantity.gt(0) && !lined.has(lot.lotNumber)).sort(fefoOrder);
    const itemLine = itemLines.find((l) => l.lot_number === null && l.counted === null);
    if (itemLine && missing.length > 0) {
      const first = missing.shift()!;
      await trx('stocktake_lines').where({ id: itemLine.id }).update({ lot_number: first.lotNumber });
      itemLine.lot_number = first.lotNumber;
    }
    if (missing.length === 0) continue;
    const rows = await trx('stocktake_lines')
      .insert(missing.map((lot) => ({ stocktake_id: stocktakeId, item_id: itemId, lot_number: lot.lotNumber })))
      .returning<{ id: number; lot_number: string }[]>(['id', 'lot_number']);
    for (const row of rows)
      added.push({
        id: row.id,
        item_id: itemId,
        lot_number: row.lot_number,
        lot_expires_on: null,
        expected: null,
        counted: null,
        counted_at: null,
      });
  }
  return added;
}

export function stocktakesService(db: Db) {
  async function readRow(id: number): Promise<StocktakeReadRow> {
    const { rows } = await preparedRaw<{ rows: StocktakeReadRow[] }>(db, sql`${STOCKTAKE_SELECT} WHERE s.id = ${id}`);
    if (!rows[0]) throw NotFound(STOCKTAKE_NOT_FOUND);
    return rows[0];
  }

  async function linesOf(id: number, where: Sql = sql`true`): Promise<StocktakeLineRow[]> {
    const { rows } = await toRaw<{ rows: StocktakeLineRow[] }>(
      db,
      sql`${LINE_SELECT} WHERE l.stocktake_id = ${id} AND ${where} ORDER BY item_name, l.item_id, l.lot_number NULLS FIRST`,
    );
    return rows;
  }

  /** The item's line (lotNumber null), or the line of one of its lots. */
  async function lineOf(
    id: number,
    itemId: number,
    lotNumber: string | null = null,
  ): Promise<StocktakeLineRow | undefined> {
    const { rows } = await preparedRaw<{ rows: StocktakeLineRow[] }>(
      db,
      sql`${LINE_SELECT} WHERE l.stocktake_id = ${id} AND l.item_id = ${itemId} AND l.lot_number IS NOT DISTINCT FROM ${lotNumber}::text`,
    );
    return rows[0];
  }

  async function countRecord(countId: number): Promise<StocktakeCountRow> {
    const { rows } = await preparedRaw<{ rows: StocktakeCountRow[] }>(db, sql`${COUNT_SELECT} WHERE c.id = ${countId}`);
    return rows[0];
  }

  /** The stocktake locked: FOR KEY SHARE for a count (counts side by side), FOR UPDATE to post or cancel. 404 when none. */
  async function lockHead(id: number, strength: 'share' | 'update'): Promise<StocktakeRow> {
    const lock = strength === 'update' ? sql.raw('FOR UPDATE') : sql.raw('FOR KEY SHARE');
    const { rows } = await preparedRaw<{ rows: StocktakeRow[] }>(
      db,
      sql`SELECT * FROM stocktakes WHERE id = ${id} ${lock}`,
    );
    if (!rows[0]) throw NotFound(STOCKTAKE_NOT_FOUND);
    return rows[0];
  }

  async function detail(id: number, opts: { lines?: 'all' | 'counted' } = {}): Promise<StocktakeDetail> {
    const stocktake = await readRow(id);
    const all = await linesOf(id);
    const lines = opts.lines === 'counted' ? all.filter((l) => l.counted !== null) : all;
    return { stocktake, lines, totals: totalsOf(all) };
  }

  /** Which item a count names: by id (404 'Item not found') or by code, through the one lookup (404 as GET /api/items/lookup). */
  async function itemOfCount(body: CountBody): Promise<number> {
    if (body.itemId !== undefined) {
      if (!(await itemExists(db, body.itemId))) throw NotFound('Item not found');
      return body.itemId;
    }
    const itemId = await itemIdForCode(db, body.code!);
    if (itemId === undefined) throw new UnknownItemCode(body.code!);
    return itemId;
  }

  return {
    /** The stocktake with its lines (by item name) and totals; 404 when none. */
    get: (id: number) => detail(id),

    /** The stocktake and its totals, summed in SQL (as get()'s, without reading its lines); 404 when none. */
    async summary(id: number): Promise<{ stocktake: StocktakeReadRow; totals: StocktakeTotals }> {
      const stocktake = await readRow(id);
      const {
        rows: [t],
      } = await preparedRaw<{
        rows: {
          lines_total: number;
          lines_counted: number;
          lines_found: number;
          items_with_variance: number;
          variance_value: string;
        }[];
      }>(
        db,
        sql`SELECT count(*)::int AS lines_total,
                   count(*) FILTER (WHERE l.counted IS NOT NULL AND l.expected IS NOT NULL)::int AS lines_counted,
                   count(*) FILTER (WHERE l.found)::int AS lines_found,
                   count(*) FILTER (WHERE l.counted <> l.expected)::int AS items_with_variance,
                   coalesce(sum((l.counted - l.expected) * coalesce(l.unit_price, item_price))
                              FILTER (WHERE l.counted <> l.expected), 0)::numeric(20,2)::text AS variance_value
              FROM stocktake_lines l JOIN ${itemRefs('item_ref')} ON item_ref.item_id = l.item_id
             WHERE l.stocktake_id = ${id}`,
      );
      return {
        stocktake,
        totals: {
          linesTotal: t.lines_total,
          linesCounted: t.lines_counted,
          linesFound: t.lines_found,
          itemsWithVariance: t.items_with_variance,
          varianceValue: t.variance_value,
        },
      };
    },

    /**
     * One page of the stocktake's lines for its review, sorted in SQL: the largest variance value
     * first (gain or loss), then the largest variance, then by item name; uncounted lines last.
     * `filter`: all, counted, uncounted, or variance (counted, not as expected). 404 when none.
     */
    async lines(
      id: number,
      { page, limit, filter }: { page: number; limit: number; filter: LineFilter },
    ): Promise<{ rows: StocktakeLineRow[]; total: number }> {
      const where = LINE_FILTER_SQL[filter];
      const { rows } = await preparedRaw<{ rows: StocktakeLineRow[] }>(
        db,
        sql`${LINE_SELECT} WHERE l.stocktake_id = ${id} AND ${where}
             ORDER BY l.counted IS NULL,
                      abs((l.counted - l.expected) * coalesce(l.unit_price, item_price)) DESC NULLS LAST,
                      abs(l.counted - l.expected) DESC NULLS LAST, item_name, l.item_id, l.lot_number NULLS FIRST
             LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
      );
      const {
        rows: [{ total, known }],
      } = await preparedRaw<{ rows: { total: number; known: boolean }[] }>(
        db,
        sql`SELECT (SELECT count(*)::int FROM stocktake_lines l WHERE l.stocktake_id = ${id} AND ${where}) AS total,
                   EXISTS (SELECT 1 FROM stocktakes WHERE id = ${id}) AS known`,
      );
      if (!known) throw NotFound(STOCKTAKE_NOT_FOUND);
      return { rows, total };
    },

    /** One page of stocktakes, newest first, with their line counts. */
    async list(query: StocktakeListQuery): Promise<{ rows: StocktakeReadRow[]; total: number }> {
      const where = query.status ? sql`s.status = ${query.status}` : sql`true`;
      const { rows } = await toRaw<{ rows: StocktakeReadRow[] }>(
        db,
        sql`${STOCKTAKE_SELECT} WHERE ${where} ORDER BY s.created_at DESC, s.id DESC
             LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`,
      );
      const [{ total }] = (
        await toRaw<{ rows: { total: number }[] }>(
          db,
          sql`SELECT count(*)::int AS total FROM stocktakes s WHERE ${where}`,
        )
      ).rows;
      return { rows, total };
    },

    /**
     * Creates an open stocktake with one uncounted line per item in scope. Unknown category or
     * item ids are 400 naming them; a scope without items is 400. Audited.
     */
    create(input: CreateStocktake, actor: Actor): Promise<StocktakeDetail> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const { scope } = input;
        if ('categoryIds' in scope) {
          const missing = await missingCategoryIds(trx, scope.categoryIds);
          if (missing.length > 0) throw BadRequest(`Unknown category id(s): ${list(missing)}`);
        }
        if ('itemIds' in scope) {
          const missing = await missingItemIds(trx, scope.itemIds);
          if (missing.length > 0) throw BadRequest(`Unknown item id(s): ${list(missing)}`);
        }
        const {
          rows: [head],
        } = await toRaw<{ rows: { id: number; reference: string }[] }>(
          trx,
          sql`INSERT INTO stocktakes (reference, name, blind, scope, created_by)
              VALUES ('ST-' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD') || '-' || nextval('stocktake_number_seq'),
                      ${input.name ?? null}, ${input.blind}, ${JSON.stringify(scope)}::jsonb, ${actor.userId})
              RETURNING id, reference`,
        );
        const { rowCount } = await toRaw<{ rowCount: number }>(
          trx,
          sql`INSERT INTO stocktake_lines (stocktake_id, item_id)
              SELECT ${head.id}, s.id FROM (${itemIdsInScopeSql(scope)}) s ORDER BY s.id`,
        );
        if (rowCount === 0) throw BadRequest('No active items in the scope');
        return {
          result: await stocktakesService(trx).get(head.id),
          audit: {
            entityType: 'stocktake',
            entityId: head.reference,
            action: 'create',
            after: { name: input.name ?? null, scope, blind: input.blind, lines: rowCount },
          },
        };
      });
    },

    /**
     * Records a count (a scan, or a typed quantity) on an open stocktake: `add` adds to the line,
     * `set` replaces it; the first count of a line takes the item's current stock as its expected.
     * An item outside the scope is added as a found line. A lot-tracked item (issue 42) is counted
     * per lot: the lot a GS1 scan carries, or `lotNumber` (400 "Lot number is required for <SKU>"
     * without either); its line is the lot's (the item's line becomes its first lot's), and its
     * expected is the lot's quantity (0 for a lot the item does not have yet: posting creates it,
     * with the scan's expiry). 404 unknown stocktake or item (a code: "No item with barcode
     * '<code>'"), 409 when the stocktake is posted or cancelled, or a scan's expiry differs from its
     * lot's. Answers the line, the scan recorded, and whether the stocktake is blind.
     */
    count(
      id: number,
      body: CountBody,
      actor: Actor,
    ): Promise<{ line: StocktakeLineRow; count: StocktakeCountRow; blind: boolean }> {
      return transaction(db, { retry: true }, async (trx) => {
        const head = await stocktakesService(trx).lockHead(id, 'share');
        if (!takesCounts(head.status)) throw closed(head, 'counts can no longer change');
        const itemId = await stocktakesService(trx).itemOfCount(body);
        const { lotNumber, lotExpiresOn, lotLevel } = await lotOfCount(trx, itemId, body);
        // a lot's first count takes the item's line, when no lot of it was counted yet (a concurrent
        // count of another lot waits for this row, then finds it taken and adds its own line)
        const claimed =
          lotNumber === null
            ? undefined
            : (
                await preparedRaw<{ rows: { id: number; counted: string | null; expected: string | null }[] }>(
                  trx,
                  sql`UPDATE stocktake_lines l SET lot_number = ${lotNumber}::text, lot_expires_on = ${lotExpiresOn}::date
                       WHERE l.stocktake_id = ${id} AND l.item_id = ${itemId} AND l.lot_number IS NULL AND l.counted IS NULL
                         AND NOT EXISTS (SELECT 1 FROM stocktake_lines o
                                          WHERE o.stocktake_id = ${id} AND o.item_id = ${itemId} AND o.lot_number = ${lotNumber}::text)
                      RETURNING l.id, l.counted, l.expected`,
                )
              ).rows[0];
        // the line, locked (a found line is added; a new lot of an item in scope is not found): a
        // concurrent count of the same item and lot waits here
        const line =
          claimed ??
          (
            await preparedRaw<{ rows: { id: number; counted: string | null; expected: string | null }[] }>(
              trx,
              sql`INSERT INTO stocktake_lines AS l (stocktake_id, item_id, found, lot_number, lot_expires_on)
                  VALUES (${id}, ${itemId},
                          NOT EXISTS (SELECT 1 FROM stocktake_lines o WHERE o.stocktake_id = ${id} AND o.item_id = ${itemId} AND NOT o.found),
                          ${lotNumber}::text, ${lotExpiresOn}::date)
                  ON CONFLICT (stocktake_id, item_id, (coalesce(lot_number, '')))
                  DO UPDATE SET found = l.found, lot_expires_on = coalesce(l.lot_expires_on, excluded.lot_expires_on)
                  RETURNING l.id, l.counted, l.expected`,
            )
          ).rows[0];
        const quantity = new D(body.quantity);
        const counted = body.mode === 'set' ? quantity : new D(line.counted ?? 0).plus(quantity);
        // the stock now (a lot's: its quantity) is the expected of a first count, and of a set (a recount: what is on the shelf now)
        const expected =
          body.mode === 'set' || line.expected === null
            ? lotLevel !== null
              ? sql`${lotLevel}::numeric`
              : sql`(SELECT item_current_stock FROM ${itemRefs('item_ref')} WHERE item_ref.item_id = ${itemId})`
            : sql`${line.expected}::numeric`;
        // the line and the scan written and read back, with the item and the counter, in one round trip
        const {
          rows: [written],
        } = await preparedRaw<{ rows: { line: StocktakeLineRow; count: StocktakeCountRow }[] }>(
          trx,
          sql`WITH line AS (
                UPDATE stocktake_lines l
                   SET counted = ${counted.toFixed(2)}::numeric, counted_by = ${actor.userId}::uuid, counted_at = now(),
                       expected = ${expected}
                 WHERE l.id = ${line.id}
                RETURNING l.*),
              scan AS (
                INSERT INTO stocktake_counts (stocktake_id, item_id, lot_number, mode, quantity, previous_counted, new_counted,
                                              previous_expected, new_expected, counted_by)
                SELECT ${id}, ${itemId}, line.lot_number, ${body.mode}, ${quantity.toFixed(2)}::numeric, ${line.counted}::numeric,
                       ${counted.toFixed(2)}::numeric, ${line.expected}::numeric, line.expected, ${actor.userId}::uuid FROM line
                RETURNING *)
              SELECT json_build_object('id', line.id, 'item_id', line.item_id, 'sku', item_sku, 'name', item_name,
                       'lot_number', line.lot_number, 'lot_expires_on', to_char(line.lot_expires_on, 'YYYY-MM-DD'), 'found', line.found,
                       'expected', line.expected::text, 'counted', line.counted::text, 'unit_price', item_price::text,
                       'counted_by', line.counted_by, 'counted_at', line.counted_at,
                       'counter_email', counter_email, 'counter_first_name', counter_first_name, 'counter_last_name', counter_last_name) AS line,
                     json_build_object('id', scan.id, 'stocktake_id', scan.stocktake_id, 'item_id', scan.item_id,
                       'sku', item_sku, 'name', item_name, 'lot_number', scan.lot_number, 'mode', scan.mode, 'quantity', scan.quantity::text,
                       'previous_counted', scan.previous_counted::text, 'new_counted', scan.new_counted::text,
                       'previous_expected', scan.previous_expected::text, 'new_expected', scan.new_expected::text,
                       'counted_by', scan.counted_by, 'counted_at', scan.counted_at, 'undone_at', scan.undone_at,
                       'counter_email', counter_email, 'counter_first_name', counter_first_name, 'counter_last_name', counter_last_name) AS count
                FROM line JOIN scan ON true JOIN ${itemRefs('item_ref')} ON item_ref.item_id = line.item_id
                ${leftJoinUserRef('counter_', sql.raw('line.counted_by'))}`,
        );
        // JSON carries the times as text
        const at = (v: Date | string | null) => (v === null ? null : new Date(v));
        return {
          line: { ...written.line, counted_at: at(written.line.counted_at) },
          count: { ...written.count, counted_at: at(written.count.counted_at)!, undone_at: null },
          blind: head.blind,
        };
      });
    },

    /**
     * Undoes one scan of an open stocktake: the line's count goes back by what that scan changed
     * (an add's quantity; a set's new minus previous count), later scans kept. The line's
     * counter becomes the last remaining scan's; a line with no scan left is uncounted again (its
     * expected cleared), and a found line is removed. 404 unknown count, 409 already undone, closed
     * stocktake, or a count that would fall below zero; 403 another person's scan without `rights`.
     * Answers the line as it is now (null once removed), the scan, and whether the stocktake is blind.
     */
    undoCount(
      id: number,
      countId: number,
      actor: Actor,
      rights: ScanRights,
    ): Promise<{ line: StocktakeLineRow | null; count: StocktakeCountRow; blind: boolean }> {
      return transaction(db, { retry: true }, async (trx) => {
        const head = await stocktakesService(trx).lockHead(id, 'share');
        if (!takesCounts(head.status)) throw closed(head, 'counts can no longer change');
        const scan = await trx('stocktake_counts').where({ id: countId, stocktake_id: id }).first();
        if (!scan) throw NotFound('Count not found');
        refuseOthersScan(scan, actor, rights, 'undo');
        const sameLot = (q: Knex.QueryBuilder) =>
          q.whereRaw('lot_number IS NOT DISTINCT FROM ?::text', [scan.lot_number]);
        const line = await trx('stocktake_lines')
          .where({ stocktake_id: id, item_id: scan.item_id })
          .modify(sameLot)
          .forUpdate()
          .first<{ id: number; found: boolean; counted: string | null; expected: string | null }>(
            'id',
            'found',
            'counted',
            'expected',
          );
        // the scan re-read under the line's lock: two undos of one scan cannot both pass
        const undone = await trx('stocktake_counts').where({ id: countId }).first('undone_at');
        if (undone.undone_at) throw Conflict(`Count ${countId} is already undone`);
        const change = new D(scan.new_counted).minus(scan.previous_counted ?? 0);
        const counted = new D(line!.counted ?? 0).minus(change);
        if (counted.isNegative()) {
          const item = await stocktakesService(trx).lineOf(id, scan.item_id, scan.lot_number);
          throw Conflict(
            `Undoing this count would leave the count of ${item!.sku} below zero: undo the later counts first`,
          );
        }
        await trx('stocktake_counts')
          .where({ id: countId })
          .update({ undone_at: trx.fn.now(), undone_by: actor.userId });
        const last = await trx('stocktake_counts')
          .where({ stocktake_id: id, item_id: scan.item_id })
          .modify(sameLot)
          .whereNull('undone_at')
          .orderBy('id', 'desc')
          .first<{ counted_by: string | null; counted_at: Date } | undefined>('counted_by', 'counted_at');
        // a lot's line without scans: removed beside the item's other lines; the item's line again when it is the only one
        const otherLines =
          !last && scan.lot_number !== null
            ? await trx('stocktake_lines')
                .where({ stocktake_id: id, item_id: scan.item_id })
                .whereNot({ id: line!.id })
                .first('id')
            : undefined;
        let lineLot: string | null = scan.lot_number;
        if (!last && (line!.found || otherLines)) {
          await trx('stocktake_lines').where({ id: line!.id }).delete();
        } else if (!last) {
          lineLot = null;
          await trx('stocktake_lines').where({ id: line!.id }).update({
            counted: null,
            expected: null,
            counted_by: null,
            counted_at: null,
            lot_number: null,
            lot_expires_on: null,
          });
        } else {
          // a set took the stock again as expected: its undo restores the expected before it, unless a later set took it again
          const laterSet = await trx('stocktake_counts')
            .where({ stocktake_id: id, item_id: scan.item_id, mode: 'set' })
            .modify(sameLot)
            .where('id', '>', countId)
            .whereNull('undone_at')
            .first('id');
          const restoresExpected = scan.mode === 'set' && scan.previous_expected !== null && !laterSet;
          await trx('stocktake_lines')
            .where({ id: line!.id })
            .update({
              counted: counted.toFixed(2),
              expected: restoresExpected ? scan.previous_expected : line!.expected,
              counted_by: last.counted_by,
              counted_at: last.counted_at,
            });
        }
        const read = stocktakesService(trx);
        return {
          line: (await read.lineOf(id, scan.item_id, lineLot)) ?? null,
          count: await read.countRecord(countId),
          blind: head.blind,
        };
      });
    },

    /**
     * Changes the quantity of one scan (a box of 24 scanned once): in one transaction, the scan is
     * undone and a new `add` of `quantity` of its item recorded, with count's and undoCount's locks
     * and retries, so a refusal leaves everything as it was. Quantity 0 only undoes it; the same
     * quantity changes nothing. Only an add can change its quantity (a set is a recount: set the
     * line again). Refusals as undoCount's: 403 another person's scan without `rights`, 404 unknown stocktake or a count not of it, 409 closed
     * stocktake, a count already undone, a set, or a count that would fall below zero. Answers the
     * line now (null once a found line lost its last scan), the new scan (null for quantity 0, the
     * scan itself when unchanged), the scan undone (null when unchanged), and whether it is blind.
     */
    changeCount(
      id: number,
      { countId, quantity }: { countId: number; quantity: string | number },
      actor: Actor,
      rights: ScanRights,
    ): Promise<{
      line: StocktakeLineRow | null;
      count: StocktakeCountRow | null;
      undone: StocktakeCountRow | null;
      blind: boolean;
    }> {
      return transaction(db, { retry: true }, async (trx) => {
        const read = stocktakesService(trx);
        const head = await read.lockHead(id, 'share');
        if (!takesCounts(head.status)) throw closed(head, 'counts can no longer change');
        const scan = await trx('stocktake_counts').where({ id: countId, stocktake_id: id }).first<
          | {
              item_id: number;
              lot_number: string | null;
              mode: CountMode;
              quantity: string;
              undone_at: Date | null;
              counted_by: string | null;
            }
          | undefined
        >('item_id', 'lot_number', 'mode', 'quantity', 'undone_at', 'counted_by');
        if (!scan) throw NotFound('Count not found');
        refuseOthersScan(scan, actor, rights, 'change');
        if (scan.mode === 'set') throw Conflict(`Count ${countId} set the line's count: set it again instead`);
        const typed = new D(quantity);
        if (typed.eq(scan.quantity) && !scan.undone_at) {
          return {
            line: (await read.lineOf(id, scan.item_id, scan.lot_number)) ?? null,
            count: await read.countRecord(countId),
            undone: null,
            blind: head.blind,
          };
        }
        // undoCount locks the line and re-reads the scan under that lock (409 when already undone)
        const undone = await read.undoCount(id, countId, actor, rights);
        if (typed.isZero()) return { line: undone.line, count: null, undone: undone.count, blind: head.blind };
        const counted = await read.count(
          id,
          { itemId: scan.item_id, lotNumber: scan.lot_number ?? undefined, quantity: typed.toFixed(2), mode: 'add' },
          actor,
        );
        return { line: counted.line, count: counted.count, undone: undone.count, blind: head.blind };
      });
    },

    /**
     * The stocktake's scans, newest first (undone ones too, with undoneAt); with `countedBy`, only
     * that person's (the count page's "Your last scans": ten people counting each see their own,
     * however many the others scanned since).
     */
    async counts(
      id: number,
      { limit, countedBy }: { limit: number; countedBy?: string },
    ): Promise<StocktakeCountRow[]> {
      if (!(await db('stocktakes').where({ id }).first('id'))) throw NotFound(STOCKTAKE_NOT_FOUND);
      const by = countedBy === undefined ? sql`true` : sql`c.counted_by = ${countedBy}::uuid`;
      const { rows } = await toRaw<{ rows: StocktakeCountRow[] }>(
        db,
        sql`${COUNT_SELECT} WHERE c.stocktake_id = ${id} AND ${by} ORDER BY c.id DESC LIMIT ${limit}`,
      );
      return rows;
    },

    /**
     * Posts an open stocktake in one transaction: each counted line's variance (counted -
     * expected) is applied to the item's current stock as one `adjustment` movement (reason
     * `Stocktake <reference>`) through the ledger's bulk path; `uncounted: 'zero'` counts the
     * uncounted lines as 0 against the stock at posting. Fixes each line's unit price, sets the
     * counted items' lastCountedAt, and is audited. 409: already posted or cancelled (nothing
     * written), or a line whose result would be below zero.
     */
    post(id: number, options: { uncounted: UncountedChoice }, actor: Actor): Promise<PostOutcome> {
      return transaction(db, { retry: true, audit: auditAs(actor) }, async (trx) => {
        const head = await stocktakesService(trx).lockHead(id, 'update');
        if (head.status === 'posted') throw Conflict(`Stocktake ${head.reference} is already posted`);
        if (head.status === 'cancelled') throw closed(head, 'it cannot be posted');
        const zero = options.uncounted === 'zero';
        const lines = await trx('stocktake_lines')
          .where({ stocktake_id: id })
          .modify((q) => {
            if (!zero) q.whereNotNull('counted');
          })
          .orderBy(['item_id', 'id'])
          .select<PostedLine[]>(
            'id',
            'item_id',
            'lot_number',
            trx.raw(`to_char(lot_expires_on, 'YYYY-MM-DD') AS lot_expires_on`),
            'expected',
            'counted',
            'counted_at',
          );
        const locked = await lockItemsForStock(trx, [...new Set(lines.map((l) => l.item_id))]);
        const tracked = [...locked.values()].filter((item) => item.tracking === 'lot').map((item) => item.id);
        // a lot-tracked item's lots, read under its lock: each counted lot is adjusted from its level now
        const lots = tracked.length > 0 ? await lockLotsOfItems(trx, tracked) : new Map<number, WorkingLot[]>();
        if (zero) lines.push(...(await linesForUncountedLots(trx, id, lines, lots)));
        const reason = `Stocktake ${head.reference}`;
        const changes: StockChange[] = [];
        const zeroed: { id: number; expected: string }[] = [];
        for (const line of lines) {
          const item = locked.get(line.item_id)!;
          const itemLots = lots.get(item.id);
          if (itemLots && line.lot_number === null && line.counted !== null)
            throw Conflict(
              `Stocktake line ${item.sku} was counted without a lot, and ${item.sku} is now tracked by lot: count it by lot`,
            );
          if (!itemLots && line.lot_number !== null)
            throw Conflict(
              `Stocktake line ${item.sku} lot ${line.lot_number} was counted by lot, and ${item.sku} is no longer tracked by lot: recount it`,
            );
          const lot = line.lot_number === null ? undefined : itemLots!.find((l) => l.lotNumber === line.lot_number);
          // the level the variance applies to: the lot's now (0 for a lot the item does not have), else the item's
          // (a lot-tracked item's own line, uncounted, holds none of its lots: they have their lines)
          const level =
            line.lot_number === null
              ? itemLots
                ? new D(0)
                : new D(item.current_stock)
              : lot
                ? lot.quantity
                : new D(0);
          const expected = line.expected ?? level.toFixed(2);
          if (line.counted === null) zeroed.push({ id: line.id, expected });
          const variance = new D(line.counted ?? 0).minus(expected);
          if (variance.isZero()) continue;
          const target = level.plus(variance);
          if (target.isNegative()) {
            const what = line.lot_number === null ? `${item.sku}` : `${item.sku} lot ${line.lot_number}`;
            throw Conflict(
              `Stocktake line ${what} would leave stock below zero: counted ${new D(line.counted ?? 0).toString()}, ` +
                `expected ${new D(expected).toString()}, stock now ${level.toString()}; recount it`,
            );
          }
          changes.push({
            itemId: item.id,
            type: 'adjustment',
            quantity: target.toFixed(2),
            reason,
            performedBy: actor.userId,
            reference: { type: 'stocktake', id: head.reference },
            ...(line.lot_number === null
              ? {}
              : {
                  // a lot the item does not have yet is created with the scan's expiry (none: the item's shelf life)
                  lot: lot
                    ? { lotNumber: line.lot_number }
                    : { lotNumber: line.lot_number, expiresOn: line.lot_expires_on ?? undefined },
                }),
          });
        }
        const movements =
          changes.length > 0 ? (await writeStockChanges(trx, { itemStock, locked, changes })).length : 0;
        if (zeroed.length > 0) {
          await preparedRaw(
            trx,
            sql`UPDATE stocktake_lines l SET counted = 0, expected = v.expected
                  FROM jsonb_to_recordset(${JSON.stringify(zeroed)}::jsonb) AS v(id int, expected numeric)
                 WHERE l.id = v.id`,
          );
        }
        // the prices valuing the variances, fixed from now on
        const {
          rows: [value],
        } = await preparedRaw<{ rows: { variance_value: string }[] }>(
          trx,
          sql`WITH priced AS (
                UPDATE stocktake_lines l SET unit_price = item_price FROM ${itemRefs('item_ref')}
                 WHERE item_ref.item_id = l.item_id AND l.stocktake_id = ${id}
                RETURNING l.expected, l.counted, l.unit_price)
              SELECT coalesce(sum((counted - expected) * unit_price), 0)::numeric(20,2)::text AS variance_value
                FROM priced WHERE counted IS NOT NULL`,
        );
        // an item counted by lot: counted when its last lot was
        const countedAt = new Map<number, Date>();
        for (const l of lines)
          if (l.counted_at !== null && !(countedAt.get(l.item_id)! >= l.counted_at))
            countedAt.set(l.item_id, l.counted_at);
        await markItemsCounted(
          trx,
          [...countedAt].map(([itemId, at]) => ({ itemId, countedAt: at })),
        );
        await trx('stocktakes').where({ id }).update({
          status: 'posted',
          uncounted: options.uncounted,
          posted_by: actor.userId,
          posted_at: trx.fn.now(),
          updated_at: trx.fn.now(),
        });
        const outcome: PostOutcome = {
          reference: head.reference,
          itemsCounted: lines.length,
          itemsAdjusted: changes.length,
          varianceValue: value.variance_value,
          movements,
        };
        await publishEvent(trx as Knex.Transaction, 'stocktake.posted', outcome);
        return {
          result: outcome,
          audit: {
            entityType: 'stocktake',
            entityId: head.reference,
            action: 'post',
            before: { status: head.status },
            after: {
              status: 'posted',
              uncounted: options.uncounted,
              itemsCounted: outcome.itemsCounted,
              itemsAdjusted: outcome.itemsAdjusted,
              varianceValue: outcome.varianceValue,
            },
          },
        };
      });
    },

    /** Cancels an open stocktake (nothing changes stock). 409 once posted, or when already cancelled. Audited. */
    cancel(id: number, actor: Actor): Promise<StocktakeReadRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const head = await stocktakesService(trx).lockHead(id, 'update');
        if (head.status === 'cancelled') throw Conflict(`Stocktake ${head.reference} is already cancelled`);
        if (head.status === 'posted') throw closed(head, 'it cannot be cancelled');
        await trx('stocktakes').where({ id }).update({
          status: 'cancelled',
          cancelled_by: actor.userId,
          cancelled_at: trx.fn.now(),
          updated_at: trx.fn.now(),
        });
        return {
          result: await stocktakesService(trx).readRow(id),
          audit: {
            entityType: 'stocktake',
            entityId: head.reference,
            action: 'cancel',
            before: { status: head.status },
            after: { status: 'cancelled' },
          },
        };
      });
    },

    /**
     * The cycle-count list: active items not counted for `days` days (never counted: due),
     * highest stock value (price x current stock) first, then the longest uncounted.
     */
    async suggestions({ days, limit }: { days: number; limit: number }): Promise<Suggestion[]> {
      const due = await itemsDueForCount(db, { days, limit });
      const categories = await categoryBuyers(
        db,
        due.map((item) => item.category_id),
      );
      return due.map((item) => ({ ...item, category_name: categories.get(item.category_id)!.name }));
    },

    readRow,
    lineOf,
    countRecord,
    lockHead,
    itemOfCount,
  };
}

export type StocktakesService = ReturnType<typeof stocktakesService>;
