import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';

/** An item's VAT rate as text: its own, else the default rate, else 0 (`alias` names the items row). */
export const effectiveVatRate = (alias: string) =>
  `coalesce(${alias}.vat_rate, (SELECT rate FROM vat_rates WHERE is_default), 0)::numeric(5,4)::text`;

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
};

/** One items row `i` as ItemForLine JSON (decimals stay strings). */
const ITEM_FOR_LINE_JSON = sql`json_build_object('id', i.id, 'name', i.name, 'sku', i.sku, 'price', i.price::text,
    'vatRate', ${sql.raw(effectiveVatRate('i'))},
    'categoryId', i.category_id, 'isActive', i.is_active, 'currentStock', i.current_stock::text)`;

/**
 * A scalar subquery: the items of these ids, as one JSON array of ItemForLine (the ids travel as
 * one array parameter, so the text is the same for any number). A statement that reads more in the
 * same round trip (saving a draft also reads the charge code) embeds it.
 */
export const itemsForLinesJson = (ids: number[]): Sql =>
  sql`(SELECT coalesce(json_agg(${ITEM_FOR_LINE_JSON}), '[]') FROM items i WHERE i.id = ANY(${[...new Set(ids)]}::int[]))`;

/**
 * A scalar subquery: the item of this SKU, typed in any case, as ItemForLine JSON, null when there is
 * none (the counter's scan; an index lookup on lower(sku)). SKUs are unique as written, so two items
 * may differ only in case: the one written exactly as typed wins, else the oldest.
 */
export const itemForLineBySkuJson = (sku: string): Sql =>
  sql`(SELECT ${ITEM_FOR_LINE_JSON} FROM items i WHERE lower(i.sku) = lower(${sku}) ORDER BY i.sku = ${sku} DESC, i.id LIMIT 1)`;

export const itemsById = (items: ItemForLine[]) => new Map(items.map((i) => [i.id, i]));

/** What other modules (quotes, sales, orders) read about items, without touching items' routes. */
export async function findItemsForLines(db: Db, ids: number[]): Promise<Map<number, ItemForLine>> {
  if (ids.length === 0) return new Map();
  const { rows } = await preparedRaw<{ rows: { items: ItemForLine[] }[] }>(
    db,
    sql`SELECT ${itemsForLinesJson(ids)} AS items`,
  );
  return itemsById(rows[0].items);
}
