import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { D } from '../../lib/money';

/**
 * The stock rule: an item is low on stock when it is active and its current stock is at or below
 * its minimum. A predicate over `items i`, for the statements that count or filter by it (the
 * dashboard's count, the system alerts, the notifications' acknowledgements).
 */
export const LOW_STOCK_CONDITION = sql.raw('i.is_active AND i.current_stock <= i.minimum_stock');

/**
 * The replenishment target of the items row `i` (issue 17): the stock a reorder brings it back up to,
 * minimum_stock + reorder_quantity, or twice minimum_stock when the item has no reorder quantity.
 * An item with a zero minimum and no reorder quantity has a target of 0, so it is never short.
 */
export const REORDER_TARGET = sql.raw('coalesce(i.minimum_stock + i.reorder_quantity, 2 * i.minimum_stock)');

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
 * The one low-stock query: the items LOW_STOCK_CONDITION selects, with their category, in the
 * given order. A caller may join more to it before running it (the notifications join their
 * acknowledgements); lowStockItems() runs it as it is.
 */
export function lowStockQuery(db: Db, order: LowStockOrder = 'shortfall'): Knex.QueryBuilder {
  return db('items as i')
    .join('categories as c', 'c.id', 'i.category_id')
    .where(toRaw(db, LOW_STOCK_CONDITION))
    .orderByRaw(ORDER[order])
    .select(
      'i.id',
      'i.name',
      'i.sku',
      'i.price',
      'i.current_stock',
      'i.minimum_stock',
      'c.id as category_id',
      'c.name as category_name',
      'c.color as category_color',
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

/** Active items at or below their minimum stock (the dashboard's list and the sales low-stock report). */
export async function lowStockItems(db: Db, order: LowStockOrder = 'shortfall'): Promise<LowStockItem[]> {
  const rows: LowStockRow[] = await lowStockQuery(db, order);
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

/** LOW_STOCK_CONDITION for an item already read, so a list need not select it again. */
export const isLowStock = (item: { is_active: boolean; current_stock: string; minimum_stock: string }): boolean =>
  item.is_active && new D(item.current_stock).lte(item.minimum_stock);
