import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { countActiveUsers } from '../users/users.queries';
import { expiryFigures, expiryWarningDays, storesToday, type ExpiryFigures } from '../lots/lots.queries';
import { categoryRefs } from '../categories/categories.queries';
import { stockCountFigures, type StockCountFigures } from '../stocktakes/stocktakes.queries';
import {
  activeStockFiguresSql,
  categoryStockFiguresSql,
  lowStockItems,
  type LowStockItem,
} from '../items/items.queries';

/** Figures over active items; totalValue = sum(price x currentStock) as a decimal string. */
export type StatsRecord = { totalItems: number; lowStockItems: number; totalValue: string; activeUsers: number };

/** A category with its active items' count and stock value (a decimal string). */
export type CategoryStatRecord = {
  category: { id: number; name: string; color: string | null };
  itemCount: number;
  totalValue: string;
};

/** The period of the dashboard's stock accuracy, and after which an item is overdue for a count. */
export const STOCK_COUNT_DAYS = 90;

export function dashboardService(db: Db) {
  return {
    /** Active items only; totalValue = sum(price x currentStock), computed in SQL. */
    async stats(): Promise<StatsRecord> {
      const [{ rows }, activeUsers] = await allQueries(db, [
        () =>
          preparedRaw<{ rows: { total_items: number; low_stock: number; total_value: string }[] }>(
            db,
            activeStockFiguresSql,
          ),
        () => countActiveUsers(db),
      ]);
      const r = rows[0];
      return {
        totalItems: r.total_items,
        lowStockItems: r.low_stock,
        totalValue: r.total_value,
        activeUsers,
      };
    },

    /** Stock accuracy over the last 90 days and the items overdue for a count (the stocktakes module's figures, issue 31). */
    stockCounts(): Promise<StockCountFigures> {
      return stockCountFigures(db, STOCK_COUNT_DAYS);
    },

    /**
     * Lots expiring within the warning days and expired lots still holding stock (issue 42): the lots
     * module's range scan over the lots holding stock, flat as the lots grow.
     */
    async lotExpiry(now: Date = new Date()): Promise<ExpiryFigures> {
      return expiryFigures(db, storesToday(now), await expiryWarningDays(db));
    },

    /** The items module's low-stock list: lowest stock relative to the minimum first; the first `limit` when given. */
    lowStock(limit?: number): Promise<LowStockItem[]> {
      return lowStockItems(db, 'shortfall', limit);
    },

    /** every category, with its active items' count and value (the items module's kept figures) */
    async categoryStats(): Promise<CategoryStatRecord[]> {
      const { rows } = await preparedRaw<{
        rows: { id: number; name: string; color: string | null; item_count: number; total_value: string }[];
      }>(
        db,
        sql`SELECT c.category_id AS id, c.category_name AS name, c.category_color AS color, coalesce(f.active_items, 0)::int AS item_count,
                coalesce(f.stock_value, 0)::numeric(20,2)::text AS total_value
           FROM ${categoryRefs('c')} LEFT JOIN (${categoryStockFiguresSql}) f ON f.category_id = c.category_id
          ORDER BY c.category_name, c.category_id`,
      );
      return rows.map((r) => ({
        category: { id: r.id, name: r.name, color: r.color },
        itemCount: r.item_count,
        totalValue: r.total_value,
      }));
    },
  };
}
