import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { gtin14, gtinForms, readScan } from '../../lib/barcodes';
import { preparedRaw } from '../../db/prepared';
import { sql, toRaw, type Sql } from '../../db/sql';
import { categoryRefs } from '../categories/categories.queries';
import type { ItemStock } from '../stock-movements/stock-movements.ledger';
import { lastRecordedStock } from '../stock-movements/stock-movements.queries';
import { defaultVatRateSql } from '../vat-rates/vat-rates.queries';
import type { ReferenceCounters } from '../../db/references';

/*
 * What other modules may ask of the items table: typed functions, and the fragments one of their
 * statements embeds where it must join items for speed (a report, a list, the locks of a sale's
 * transaction). A fragment that reads an items row takes the caller's alias for it, so the items
 * module still decides what its columns mean.
 */

/** An item's VAT rate as text: its own, else the default rate, else 0 (`alias` names the items row). */
export const effectiveVatRate = (alias: string): Sql =>
  sql`coalesce(${sql.ident(alias, 'vat_rate')}, ${defaultVatRateSql}, 0)::numeric(5,4)::text`;

/**
 * The stock rule, the owner's fragment for a cross-module statement: the items row `alias` is low on
 * stock when it is active and its current stock is at or below its minimum, written as
 * `current_stock - minimum_stock <= 0` (exact in numeric): PostgreSQL cannot estimate a comparison
 * of two columns (it assumes a third of the rows), but it keeps statistics on this difference
 * (items_shortfall_stats), so it knows the low items are few and plans the joins on them
 * (replenishment's sources and orders, the notifications' acknowledgements) as index lookups. The
 * same expression is the predicate of the partial index items_low_stock, which the low-stock lists
 * read, and of the kept low-stock figures (migration 20261128020000): change them together
 * (test/item-figures.test.ts compares them as PostgreSQL reads them).
 */
export const lowStock = (alias: string): Sql => {
  const i = sql.ident(alias);
  return sql`${i}.is_active AND ${i}.current_stock - ${i}.minimum_stock <= 0`;
};

/**
 * The replenishment target of the items row `alias` (issue 17), the owner's fragment for a
 * cross-module statement: the stock a reorder brings it back up to, minimum_stock +
 * reorder_quantity, or twice minimum_stock when the item has no reorder quantity. An item with a
 * zero minimum and no reorder quantity has a target of 0, so it is never short.
 */
export const reorderTarget = (alias: string): Sql => {
  const i = sql.ident(alias);
  return sql`coalesce(${i}.minimum_stock + ${i}.reorder_quantity, 2 * ${i}.minimum_stock)`;
};

/**
 * An item's reference, the read model another module's statement joins: every item as `alias`, with
 * the named columns item_id, item_sku, item_name, item_price, item_is_active, item_category_id,
 * item_current_stock and item_tracking, and (issue 43) item_signal_word, item_pictograms,
 * item_restricted and item_needs_coshh_reference (the item's or its category's coshh_required),
 * which are all a caller reads of it (`JOIN ${itemRefs('i')} ON i.item_id = ...`). A plain projection,
 * so PostgreSQL plans it as the table itself (a column no caller reads is never computed).
 */
export const itemRefs = (alias: string): Sql =>
  sql`(SELECT id AS item_id, sku AS item_sku, name AS item_name, price AS item_price, is_active AS item_is_active, category_id AS item_category_id,
              current_stock AS item_current_stock, tracking AS item_tracking,
              hazard_signal_word AS item_signal_word, hazard_pictograms AS item_pictograms, restricted AS item_restricted,
              (coshh_required OR EXISTS (SELECT 1 FROM ${categoryRefs('rc')} WHERE rc.category_id = items.category_id AND rc.category_coshh_required))
                AS item_needs_coshh_reference
         FROM items) ${sql.ident(alias)}`;

/**
 * The active hazardous items (issue 43: any pictogram or H statement) as `alias`, with the named
 * columns item_id, item_sku and item_name: what the safety data sheet alert checks. It reads the
 * partial index items_hazardous.
 */
export const hazardousItemRefs = (alias: string): Sql =>
  sql`(SELECT id AS item_id, sku AS item_sku, name AS item_name FROM items WHERE hazardous AND is_active) ${sql.ident(alias)}`;

/**
 * The hazardous items (issue 43: the hazard register) as `alias`, the active ones and those holding
 * stock, with the named columns item_id, item_sku, item_name, item_is_active, item_current_stock
 * (text), item_holds_stock, item_signal_word, item_pictograms, item_h_statements (text[]),
 * item_cas_number, item_un_number and item_storage. It reads the partial index items_hazardous.
 */
export const hazardRegisterItemRefs = (alias: string): Sql =>
  sql`(SELECT id AS item_id, sku AS item_sku, name AS item_name, is_active AS item_is_active, current_stock::text AS item_current_stock,
              current_stock > 0 AS item_holds_stock, hazard_signal_word AS item_signal_word, hazard_pictograms AS item_pictograms,
              hazard_statements AS item_h_statements, cas_number AS item_cas_number, un_number AS item_un_number, hazard_storage AS item_storage
         FROM items WHERE hazardous AND (is_active OR current_stock > 0)) ${sql.ident(alias)}`;

/**
 * The items low on stock now (lowStock) as `alias`, with the named columns item_id and
 * item_minimum_stock: what the low-stock acknowledgements check an episode against. It reads the
 * partial index items_low_stock.
 */
export const lowStockItemRefs = (alias: string): Sql =>
  sql`(SELECT i.id AS item_id, i.minimum_stock AS item_minimum_stock FROM items i WHERE ${lowStock('i')}) ${sql.ident(alias)}`;

/**
 * The items to replenish (issue 17): those lowStock selects whose stock is below their
 * reorderTarget (an item with a zero minimum and no reorder quantity never is), only those of
 * `itemIds` when given, with the named columns item_id, item_name, item_sku, item_current_stock,
 * item_minimum_stock, item_reorder_quantity and item_target: the body of the caller's CTE.
 */
export const itemsToReplenishSql = (itemIds?: number[]): Sql =>
  sql`SELECT i.id AS item_id, i.name AS item_name, i.sku AS item_sku, i.current_stock AS item_current_stock,
             i.minimum_stock AS item_minimum_stock, i.reorder_quantity AS item_reorder_quantity, ${reorderTarget('i')} AS item_target
        FROM items i
       WHERE ${lowStock('i')} AND ${reorderTarget('i')} > i.current_stock${itemIds ? sql` AND i.id = ANY(${itemIds}::int[])` : sql.raw('')}`;

export type ItemForLine = {
  id: number;
  name: string;
  sku: string;
  price: string;
  /** the item's own rate, or the default rate when it has none */
  vatRate: string;
  categoryId: number;
  isActive: boolean;
  currentStock: string;
  minimumStock: string;
  /** issue 43: the item's or its category's coshhRequired */
  needsCoshhReference: boolean;
  /** issue 43: a restricted substance */
  restricted: boolean;
  /** issue 43: hazardous (any pictogram or H statement): a request line of it needs the safety data sheet acknowledged */
  hazardous: boolean;
  /** issue 42: a lot-tracked item has for sale only its sellable lots (lots.picking.ts isSellable) */
  tracking: 'none' | 'lot';
};

/** Issue 43: whether the items row `i` or its category needs a COSHH assessment reference. */
const NEEDS_COSHH = sql`(i.coshh_required OR EXISTS (SELECT 1 FROM ${categoryRefs('lc')} WHERE lc.category_id = i.category_id AND lc.category_coshh_required))`;

/** One items row `i` as ItemForLine JSON (decimals stay strings). */
const ITEM_FOR_LINE_JSON = sql`json_build_object('id', i.id, 'name', i.name, 'sku', i.sku, 'price', i.price::text,
    'vatRate', ${effectiveVatRate('i')},
    'categoryId', i.category_id, 'isActive', i.is_active, 'currentStock', i.current_stock::text,
    'minimumStock', i.minimum_stock::text, 'tracking', i.tracking,
    'needsCoshhReference', ${NEEDS_COSHH}, 'restricted', i.restricted, 'hazardous', i.hazardous)`;

/**
 * A scalar subquery: the items of these ids, as one JSON array of ItemForLine (the ids travel as
 * one array parameter, so the text is the same for any number). A statement that reads more in the
 * same round trip (saving a draft also reads the charge code) embeds it.
 */
export const itemsForLinesJson = (ids: number[]): Sql =>
  sql`(SELECT coalesce(json_agg(${ITEM_FOR_LINE_JSON}), '[]') FROM items i WHERE i.id = ANY(${[...new Set(ids)]}::int[]))`;

/**
 * A scalar subquery: the id of the item a scanned or typed code names, NULL when none; the one
 * code lookup (issue 31), which itemIdForCode, the counter's scan and every other module's scan
 * share. The code is read as src/lib/barcodes.ts readScan reads it (the scanner's Enter, control
 * characters and symbology identifier dropped; a GS1 element string's AI (01) GTIN taken) and
 * matches, in this order:
 * - an item's SKU, in any case, or written as any form of the GTIN the code carries (the one
 *   written exactly as typed wins, then one differing only in case, then the oldest);
 * - a barcode whose lookup key is the code's (a GTIN by its GTIN-14, so a UPC-A and its EAN-13
 *   are one code; anything else in lower case).
 * Two index lookups (items_sku_lower, item_barcodes_lookup_key) in one statement.
 */
export const itemIdForCodeSql = (code: string): Sql => {
  const scan = readScan(code);
  if (!scan) return sql.raw('NULL::int');
  return sql`(SELECT m.id FROM (
      (SELECT i.id, 0 AS rank FROM items i WHERE lower(i.sku) = ANY(${scan.skus}::text[])
        ORDER BY i.sku = ${scan.exact} DESC, lower(i.sku) = lower(${scan.exact}) DESC, i.id LIMIT 1)
      UNION ALL
      (SELECT b.item_id, 1 FROM item_barcodes b WHERE b.lookup_key = ${scan.key})
    ) m ORDER BY m.rank LIMIT 1)`;
};

/**
 * A scalar subquery: the item a scanned or typed code names (itemIdForCodeSql: SKU in any case,
 * barcode, GS1 GTIN, UPC-A or EAN-13) as ItemForLine JSON, null when there is none (the counter's scan).
 */
export const itemForLineBySkuJson = (code: string): Sql =>
  sql`(SELECT ${ITEM_FOR_LINE_JSON} FROM items i WHERE i.id = ${itemIdForCodeSql(code)})`;

export const itemsById = (items: ItemForLine[]) => new Map(items.map((i) => [i.id, i]));

/** Which of these items are tracked by lot (issue 42): the receive form asks their lots. */
export async function lotTrackedItemIds(db: Db, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await preparedRaw<{ rows: { id: number }[] }>(
    db,
    sql`SELECT id FROM items WHERE id = ANY(${[...new Set(ids)]}::int[]) AND tracking = 'lot'`,
  );
  return new Set(rows.map((row) => row.id));
}

/** What other modules (quotes, sales, orders) read about items, without touching items' routes. */
export async function findItemsForLines(db: Db, ids: number[]): Promise<Map<number, ItemForLine>> {
  if (ids.length === 0) return new Map();
  const { rows } = await preparedRaw<{ rows: { items: ItemForLine[] }[] }>(
    db,
    sql`SELECT ${itemsForLinesJson(ids)} AS items`,
  );
  return itemsById(rows[0].items);
}

/**
 * The id of the item a scanned or typed code names, undefined when none: the one lookup the counter,
 * stocktake counting, order receiving and `GET /api/items/lookup` share (issue 31).
 */
export async function itemIdForCode(db: Db, code: string): Promise<number | undefined> {
  const { rows } = await preparedRaw<{ rows: { id: number | null }[] }>(
    db,
    sql`SELECT ${itemIdForCodeSql(code)} AS id`,
  );
  return rows[0]?.id ?? undefined;
}

/**
 * The GTIN-14 each of these items is sold under, by item id (items without one left out): its
 * oldest barcode that is a GTIN (EAN-8, UPC-A, EAN-13 or GTIN-14 with a valid check digit),
 * else its SKU when that is one. What a lot label encodes in GS1 AI (01).
 */
export async function itemGtins(db: Db, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await preparedRaw<{ rows: { id: number; sku: string; codes: string[] | null }[] }>(
    db,
    sql`SELECT i.id, i.sku, (SELECT array_agg(b.code ORDER BY b.id) FROM item_barcodes b WHERE b.item_id = i.id) AS codes
          FROM items i WHERE i.id = ANY(${[...new Set(ids)]}::int[])`,
  );
  const gtins = new Map<number, string>();
  for (const row of rows) {
    const gtin = [...(row.codes ?? []), row.sku].map((code) => gtin14(code)).find((found) => found !== undefined);
    if (gtin) gtins.set(row.id, gtin);
  }
  return gtins;
}

/** The item a code already belongs to (as its SKU or one of its barcodes): its SKU and name. */
export type CodeOwner = { itemId: number; sku: string; name: string };

/**
 * Who owns each code to be stored, by its lookup key (src/lib/barcodes.ts lookupKey): an item one
 * of whose barcodes has the key, or (with `skus`) an item whose SKU is the code in any case or any
 * form of its GTIN. A code is unique across every item's SKU and barcodes, both ways: a new
 * barcode is checked against both, a new SKU (by the SKU's key) against the barcodes. The caller
 * holds lockCodes for the keys, so two transactions checking one code queue. Keys without an owner
 * are absent from the answer.
 */
export async function codeOwners(db: Db, keys: string[], { skus }: { skus: boolean }): Promise<Map<string, CodeOwner>> {
  const unique = [...new Set(keys)];
  const owners = new Map<string, CodeOwner>();
  if (unique.length === 0) return owners;
  const forms = skus ? unique.flatMap((key) => formsOf(key).map((form) => [form, key] as const)) : [];
  const { rows } = await preparedRaw<{ rows: (CodeOwner & { key: string })[] }>(
    db,
    sql`SELECT b.lookup_key AS key, i.id AS "itemId", i.sku, i.name
          FROM item_barcodes b JOIN items i ON i.id = b.item_id WHERE b.lookup_key = ANY(${unique}::text[])
        UNION ALL
        SELECT f.key, i.id, i.sku, i.name
          FROM unnest(${forms.map((f) => f[0])}::text[], ${forms.map((f) => f[1])}::text[]) AS f(form, key)
          JOIN items i ON lower(i.sku) = f.form`,
  );
  for (const { key, ...owner } of rows) if (!owners.has(key)) owners.set(key, owner);
  return owners;
}

/** The lower-case texts a SKU naming the code of this key may be written as. */
const formsOf = (key: string) => {
  const gtin = gtin14(key);
  return gtin ? gtinForms(gtin) : [key];
};

/** codeOwners for one key. */
export async function codeOwner(db: Db, key: string, options = { skus: true }): Promise<CodeOwner | undefined> {
  return (await codeOwners(db, [key], options)).get(key);
}

/**
 * What a SKU about to be written clashes with, in one statement: 'taken' when another item has it
 * as written (SKUs are unique as written), the owner when it is (by its lookup key `key`) any
 * item's barcode, undefined when it is free. `exceptId`: the item being renamed.
 */
export async function whatSkuClashesWith(
  db: Db,
  sku: string,
  key: string,
  exceptId?: number,
): Promise<'taken' | CodeOwner | undefined> {
  const { rows } = await preparedRaw<{ rows: (Partial<CodeOwner> & { taken: boolean })[] }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM items WHERE sku = ${sku} AND id <> ${exceptId ?? 0}) AS taken,
               o.item_id AS "itemId", i.sku, i.name
          FROM (SELECT 1) one
          LEFT JOIN item_barcodes o ON o.lookup_key = ${key}
          LEFT JOIN items i ON i.id = o.item_id`,
  );
  const [row] = rows;
  if (row.taken) return 'taken';
  return row.itemId === undefined || row.itemId === null ? undefined : (row as CodeOwner);
}

/**
 * Takes the transaction's advisory lock on a code's lookup key: whoever stores a SKU or a barcode
 * with that key (an item created or renamed, a barcode added, an import) checks and writes it
 * under the lock, so no two items come to answer to one code however the requests interleave.
 * Several keys are locked in one sorted order, so two imports never deadlock.
 */
export async function lockCodes(db: Db, keys: string[]): Promise<void> {
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 0) return;
  await toRaw(
    db,
    sql`SELECT pg_advisory_xact_lock(l.h) FROM (
          SELECT DISTINCT hashtext('items.code:' || k) AS h FROM unnest(${sorted}::text[]) AS k ORDER BY 1) l`,
  );
}

/** Whether the item exists. */
export async function itemExists(db: Db, id: number): Promise<boolean> {
  return (await db('items').where({ id }).first('id')) !== undefined;
}

/** How many items (active or not) are in the category. */
export async function itemCountInCategory(db: Db, categoryId: number): Promise<number> {
  const [{ count }] = await db('items').where({ category_id: categoryId }).count<{ count: number }[]>('* as count');
  return count;
}

/**
 * The items a stock change locks, as the ledger reads them. Every path that changes several items
 * locks them this way first, in ascending id order, so concurrent multi-item changes queue instead
 * of deadlocking. FOR NO KEY UPDATE (not FOR UPDATE): stock changes never touch the key, and this
 * lock does not conflict with the KEY SHARE locks that foreign-key checks take when another
 * transaction inserts a row referencing an item (quote or order lines), which otherwise deadlock with it.
 */
export type LockedItem = {
  id: number;
  name: string;
  sku: string;
  current_stock: string;
  category_id: number;
  is_active: boolean;
  tracking: 'none' | 'lot';
  shelf_life_days: number | null;
  /** issue 43: the item's or its category's coshh_required: a sale of it must carry a COSHH assessment reference */
  needs_coshh_reference: boolean;
  /** issue 43: a restricted substance, sold only by a manager or admin */
  restricted: boolean;
};

/**
 * The locked rows. Only the items are locked: the category's flag is read by a sub-select in the
 * select list, which FOR NO KEY UPDATE does not reach.
 */
const lockItemsWhere = (condition: Sql) =>
  sql`SELECT id, name, sku, current_stock, category_id, is_active, tracking, shelf_life_days, restricted,
         coshh_required OR EXISTS (SELECT 1 FROM ${categoryRefs('lc')} WHERE lc.category_id = items.category_id AND lc.category_coshh_required) AS needs_coshh_reference
       FROM items WHERE ${condition} ORDER BY id FOR NO KEY UPDATE`;

/** The SELECT that locks the items of these ids the stock ledger's way (the ids as one array parameter). */
export const lockItemsByIdsSql = (ids: number[]): Sql => lockItemsWhere(sql`id = ANY(${[...new Set(ids)]}::int[])`);

/**
 * The SELECT that locks the items whose ids `idsQuery` selects the stock ledger's way: a statement
 * that reads more in the same round trip (processing a sale) embeds it as a CTE and reads the rows
 * back through lockedItemsJson.
 */
export const lockItemsInSql = (idsQuery: Sql): Sql => lockItemsWhere(sql`id IN (${idsQuery})`);

/** The rows of a lock under `alias` as one JSON array of LockedItem (stock stays a decimal string). */
export const lockedItemsJson = (alias: string) => {
  const a = sql.ident(alias);
  return sql`coalesce(json_agg(json_build_object('id', ${a}.id, 'name', ${a}.name, 'sku', ${a}.sku,
    'current_stock', ${a}.current_stock::text, 'category_id', ${a}.category_id, 'is_active', ${a}.is_active,
    'tracking', ${a}.tracking, 'shelf_life_days', ${a}.shelf_life_days,
    'needs_coshh_reference', ${a}.needs_coshh_reference, 'restricted', ${a}.restricted) ORDER BY ${a}.id), '[]')`;
};

export const lockedById = (rows: LockedItem[]) => new Map(rows.map((r) => [r.id, r]));

/** Locks the items of these ids the stock ledger's way (lockItemsByIdsSql): the locked items by id. */
export async function lockItemsForStock(trx: Knex.Transaction, ids: number[]): Promise<Map<number, LockedItem>> {
  const { rows } = await preparedRaw<{ rows: LockedItem[] }>(trx, lockItemsByIdsSql(ids));
  return lockedById(rows);
}

/**
 * The UPDATE that sets the stock of locked items to the given levels (bound as one JSON value, so
 * the text is the same whatever their number); the stock ledger embeds it beside its movements.
 */
export const setStockLevelsSql = (levels: { id: number; stock: string }[]): Sql =>
  sql`UPDATE items AS i SET current_stock = v.stock, updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(levels)}::jsonb) AS v(id int, stock numeric) WHERE i.id = v.id`;

/**
 * The item row of stockLevelQuery and lowStockQuery, for a caller that joins more to them (the
 * notifications join their acknowledgements): its id and minimum stock, as expressions.
 */
export const queriedItem = { id: sql.raw('i.id'), minimumStock: sql.raw('i.minimum_stock') };

/**
 * A query over the item `itemId` with its stock levels, to which a caller may join more before
 * running it (through queriedItem).
 */
export function stockLevelQuery(db: Db, itemId: number): Knex.QueryBuilder {
  return db('items as i').where('i.id', itemId).select('i.id', 'i.name', 'i.sku', 'i.current_stock', 'i.minimum_stock');
}

/** The item's name and whether it is low on stock now; undefined when there is no such item. */
export function lowStockState(db: Db, itemId: number): Promise<{ name: string; low: boolean } | undefined> {
  return db('items as i')
    .where('i.id', itemId)
    .first('i.name', toRaw(db, sql`(${lowStock('i')}) AS low`));
}

/*
 * The kept figures (issue 34): item_counts (active items per category), item_stock_figures (per
 * category and connection slot: low on stock, out of stock, stock value) and item_count_days
 * (active items by the UTC day they were last counted), kept by triggers on items in the
 * transaction of every change (migrations 20261121002001 and 20261128020000). A read sums a few
 * rows per category or day, never the catalogue.
 */

/** Figures over active items: how many, how many are low on stock, and their stock value (a decimal string). */
export const activeStockFiguresSql = sql`SELECT
    (SELECT coalesce(sum(k.active), 0)::int FROM item_counts k) AS total_items,
    (SELECT coalesce(sum(f.low_stock), 0)::int FROM item_stock_figures f) AS low_stock,
    (SELECT coalesce(sum(f.stock_value), 0)::numeric(20,2)::text FROM item_stock_figures f) AS total_value`;

/**
 * The owner's fragment for a cross-module statement: one row per category that has (or had)
 * items, `category_id`, `active_items` (its active items) and `stock_value` (their price x
 * current stock, unrounded), to join on the caller's categories.
 */
export const categoryStockFiguresSql = sql`SELECT coalesce(k.category_id, f.category_id) AS category_id,
         coalesce(k.active, 0) AS active_items, coalesce(f.stock_value, 0) AS stock_value
    FROM item_counts k
    FULL JOIN (SELECT category_id, sum(stock_value) AS stock_value FROM item_stock_figures GROUP BY category_id) f
      ON f.category_id = k.category_id`;

/** How many items low on stock still have some, and how many have none. */
export async function lowStockCounts(db: Db): Promise<{ low: number; out: number }> {
  const { rows } = await preparedRaw<{ rows: { low: number; out: number }[] }>(
    db,
    sql`SELECT coalesce(sum(f.low_stock - f.out_of_stock), 0)::int AS low, coalesce(sum(f.out_of_stock), 0)::int AS out
          FROM item_stock_figures f`,
  );
  return rows[0];
}

/**
 * A scalar subquery: how many items are due for a count (dueForCount: active and not counted in
 * the last `days` days), from the kept item_count_days: the days before the cut-off's day (never
 * counted included) from their rows, the cut-off's own day from its items (items_active_last_counted).
 */
export const itemsDueForCountSql = (days: number): Sql =>
  sql`(SELECT ((SELECT coalesce(sum(d.items), 0) FROM item_count_days d WHERE d.day < cut.day)
             + (SELECT count(*) FROM items e
                 WHERE e.is_active AND e.last_counted_at >= cut.day_start AND e.last_counted_at < cut.at))::int
         FROM (SELECT a.at, (a.at AT TIME ZONE 'UTC')::date AS day,
                      date_trunc('day', a.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day_start
                 FROM (SELECT now() - make_interval(days => ${days}::int) AS at) a) cut)`;

/**
 * The items out of line with the stock ledger: their current stock differs from their last
 * movement's new stock, or they have stock but no movement at all. How many, and the first five SKUs by id.
 */
export async function ledgerMismatches(db: Db): Promise<{ count: number; skus: string[] | null }> {
  const { rows } = await toRaw<{ rows: { count: number; skus: string[] | null }[] }>(
    db,
    sql`SELECT count(*) AS count, (array_agg(sku ORDER BY id))[1:5] AS skus FROM (
             SELECT i.id, i.sku FROM items i
              WHERE i.current_stock <> coalesce(${lastRecordedStock(sql.raw('i.id'))}, 0)) mismatched`,
  );
  return rows[0];
}

/**
 * The whole ledger's reconciliation, as the scheduled ledger check runs it: how many items are out
 * of line (ledgerMismatches' rule) and the ids of the first `keep` of them by id.
 */
export async function ledgerMismatchedItems(db: Db, keep: number): Promise<{ count: number; ids: number[] }> {
  const { rows } = await toRaw<{ rows: { count: number; ids: number[] | null }[] }>(
    db,
    sql`SELECT count(*)::int AS count, (array_agg(id ORDER BY id))[1:${keep}::int] AS ids FROM (
             SELECT i.id FROM items i
              WHERE i.current_stock <> coalesce(${lastRecordedStock(sql.raw('i.id'))}, 0)) mismatched`,
  );
  return { count: rows[0].count, ids: rows[0].ids ?? [] };
}

/** Which of these items are out of line with the ledger now (ledgerMismatches' rule), by id: one index probe each. */
export async function ledgerMismatchedAmong(db: Db, ids: number[]): Promise<{ id: number; sku: string }[]> {
  if (ids.length === 0) return [];
  const { rows } = await toRaw<{ rows: { id: number; sku: string }[] }>(
    db,
    sql`SELECT i.id, i.sku FROM items i
         WHERE i.id = ANY(${ids}::int[]) AND i.current_stock <> coalesce(${lastRecordedStock(sql.raw('i.id'))}, 0)
         ORDER BY i.id`,
  );
  return rows;
}

/** An item low on stock, as every low-stock list reads it; quantities and price are decimal strings. */
export type LowStockItem = {
  id: number;
  name: string;
  sku: string;
  price: string;
  currentStock: string;
  minimumStock: string;
  category: { id: number; name: string; color: string | null };
};

export type LowStockOrder =
  /** the largest shortfall (minimum - current) first, then by name and id */
  | 'shortfall'
  /** out of stock first, then as 'shortfall' */
  | 'outOfStockFirst';

const ORDER: Record<LowStockOrder, string> = {
  shortfall: 'i.current_stock - i.minimum_stock, i.name, i.id',
  outOfStockFirst: 'i.current_stock = 0 DESC, i.current_stock - i.minimum_stock, i.name, i.id',
};

/** A row of lowStockQuery (snake_case, as selected). */
export type LowStockRow = {
  id: number;
  name: string;
  sku: string;
  price: string;
  current_stock: string;
  minimum_stock: string;
  category_id: number;
  category_name: string;
  category_color: string | null;
};

/**
 * The one low-stock query: the items lowStock selects, with their category, in the given order. A
 * caller may join more to it before running it (through queriedItem); lowStockItems() runs it as it is.
 */
export function lowStockQuery(db: Db, order: LowStockOrder = 'shortfall'): Knex.QueryBuilder {
  return db('items as i')
    .join(toRaw(db, categoryRefs('c')), 'c.category_id', 'i.category_id')
    .where(toRaw(db, lowStock('i')))
    .orderByRaw(ORDER[order])
    .select(
      'i.id',
      'i.name',
      'i.sku',
      'i.price',
      'i.current_stock',
      'i.minimum_stock',
      'c.category_id',
      'c.category_name',
      'c.category_color',
    );
}

/** A row of lowStockQuery as its record. */
export function toLowStockItem(row: LowStockRow): LowStockItem {
  return {
    id: row.id,
    name: row.name,
    sku: row.sku,
    price: row.price,
    currentStock: row.current_stock,
    minimumStock: row.minimum_stock,
    category: { id: row.category_id, name: row.category_name, color: row.category_color },
  };
}

/**
 * The items of `before` that a stock change took from above their minimum to at or below it (the
 * stock.low event): low now by the one rule, and their stock before the change was not; read in
 * the change's transaction after it.
 */
export async function lowStockCrossed(db: Db, before: { id: number; stock: string }[]): Promise<LowStockItem[]> {
  if (before.length === 0) return [];
  const rows: LowStockRow[] = await lowStockQuery(db)
    .join(db.raw('jsonb_to_recordset(?::jsonb) AS b(id int, stock numeric)', [JSON.stringify(before)]), 'b.id', 'i.id')
    .whereRaw('b.stock > i.minimum_stock');
  return rows.map(toLowStockItem);
}

/** The items' side of every stock change, which the caller hands to the stock ledger (stock-movements.ledger.ts). */
export const itemStock: ItemStock = {
  lock: lockItemsForStock,
  setLevelsSql: setStockLevelsSql,
  crossedLow: lowStockCrossed,
};

/**
 * Active items at or below their minimum stock (the dashboard's list and the sales low-stock
 * report); the first `limit` only when given (read in order from the partial index items_low_stock).
 */
export async function lowStockItems(
  db: Db,
  order: LowStockOrder = 'shortfall',
  limit?: number,
): Promise<LowStockItem[]> {
  const query = lowStockQuery(db, order);
  const rows: LowStockRow[] = await (limit === undefined ? query : query.limit(limit));
  return rows.map(toLowStockItem);
}

/** One page of the low-stock list (largest shortfall first) and the length of the whole list. */
export async function lowStockPage(
  db: Db,
  { page, limit }: { page: number; limit: number },
): Promise<{ items: LowStockItem[]; total: number }> {
  const [{ total }] = await lowStockQuery(db).clearSelect().clearOrder().select(db.raw('count(*)::int AS total'));
  const rows: LowStockRow[] = await lowStockQuery(db)
    .limit(limit)
    .offset((page - 1) * limit);
  return { items: rows.map(toLowStockItem), total: total as number };
}

/**
 * A stocktake's scope, as the items module reads it (issue 31): every item, the items of these
 * categories, or these items.
 */
export type ItemScope = { all: true } | { categoryIds: number[] } | { itemIds: number[] };

/**
 * The owner's fragment for a cross-module statement: `SELECT id FROM items ...`, the ids of the
 * items a stocktake of this scope counts: the active items of every category or of the given ones,
 * and items named by id whether active or not (someone asked for them by name).
 */
export const itemIdsInScopeSql = (scope: ItemScope): Sql =>
  'itemIds' in scope
    ? sql`SELECT i.id FROM items i WHERE i.id = ANY(${[...new Set(scope.itemIds)]}::int[])`
    : 'categoryIds' in scope
      ? sql`SELECT i.id FROM items i WHERE i.is_active AND i.category_id = ANY(${[...new Set(scope.categoryIds)]}::int[])`
      : sql`SELECT i.id FROM items i WHERE i.is_active`;

/** Of these ids, those naming no item. */
export async function missingItemIds(db: Db, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const found = new Set<number>(await db('items').whereIn('id', unique).pluck('id'));
  return unique.filter((id) => !found.has(id));
}

/**
 * Records when the items were last counted (a posted stocktake, issue 31): each item's
 * last_counted_at becomes the later of its own and the given time, in one statement.
 */
export async function markItemsCounted(db: Db, counted: { itemId: number; countedAt: Date }[]): Promise<void> {
  if (counted.length === 0) return;
  await preparedRaw(
    db,
    sql`UPDATE items AS i SET last_counted_at = greatest(i.last_counted_at, v.at)
          FROM jsonb_to_recordset(${JSON.stringify(counted.map((c) => ({ id: c.itemId, at: c.countedAt.toISOString() })))}::jsonb)
               AS v(id int, at timestamptz)
         WHERE i.id = v.id`,
  );
}

/**
 * The items row `alias` is due for a count when it is active and was not counted in the last
 * `days` days (never counted: due).
 */
export const dueForCount = (alias: string, days: number): Sql => {
  const i = sql.ident(alias);
  return sql`${i}.is_active AND (${i}.last_counted_at IS NULL OR ${i}.last_counted_at < now() - make_interval(days => ${days}::int))`;
};

/** An item due for a count (itemsDueForCount), with its stock value (price x current stock, 2 places). */
export type ItemDueForCount = {
  id: number;
  sku: string;
  name: string;
  category_id: number;
  current_stock: string;
  price: string;
  stock_value: string;
  last_counted_at: Date | null;
};

/**
 * The cycle-count list (issue 31): active items not counted in the last `days` days (never
 * counted: due), highest stock value first, then the longest uncounted.
 */
export async function itemsDueForCount(
  db: Db,
  { days, limit }: { days: number; limit: number },
): Promise<ItemDueForCount[]> {
  const { rows } = await preparedRaw<{ rows: ItemDueForCount[] }>(
    db,
    sql`SELECT i.id, i.sku, i.name, i.category_id, i.current_stock, i.price,
               (i.price * i.current_stock)::numeric(20,2)::text AS stock_value, i.last_counted_at
          FROM items i
         WHERE ${dueForCount('i', days)}
         ORDER BY i.price * i.current_stock DESC, i.last_counted_at ASC NULLS FIRST, i.name, i.id
         LIMIT ${limit}`,
  );
  return rows;
}

/** The rows of items and their barcodes that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const itemsReferences: ReferenceCounters = {
  users: [
    {
      table: 'item_barcodes',
      column: 'created_by',
      count: (id) => sql`SELECT count(*) FROM item_barcodes WHERE created_by = ${id}`,
    },
    { table: 'items', column: 'created_by', count: (id) => sql`SELECT count(*) FROM items WHERE created_by = ${id}` },
  ],
  categories: [
    { table: 'items', column: 'category_id', count: (id) => sql`SELECT count(*) FROM items WHERE category_id = ${id}` },
  ],
  items: [
    {
      table: 'item_barcodes',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM item_barcodes WHERE item_id = ${id}`,
    },
  ],
};

/** What a label prints of a hazardous item (issue 43): its signal word and pictograms. */
export type LabelHazard = {
  signalWord: 'Danger' | 'Warning' | null;
  pictograms: string[];
  hStatements: string[];
  pStatements: string[];
};

/** The hazardous ones (any pictogram or H statement) of these items, with what their labels print. */
export async function itemHazardsForLabels(db: Db, ids: number[]): Promise<Map<number, LabelHazard>> {
  if (ids.length === 0) return new Map();
  const { rows } = await preparedRaw<{
    rows: {
      id: number;
      signal_word: LabelHazard['signalWord'];
      pictograms: string[];
      h_statements: string[];
      p_statements: string[];
    }[];
  }>(
    db,
    sql`SELECT id, hazard_signal_word AS signal_word, hazard_pictograms AS pictograms, hazard_statements AS h_statements,
               precautionary_statements AS p_statements
          FROM items WHERE id = ANY(${ids}::int[]) AND hazardous`,
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        signalWord: row.signal_word,
        pictograms: row.pictograms,
        hStatements: row.h_statements,
        pStatements: row.p_statements,
      },
    ]),
  );
}
