import type { Db } from '../../db/knex';
import { quantityNumber } from '../../lib/money';

/** Low stock everywhere in the service means: an active item at or below its minimum stock. */
export const LOW_STOCK_CONDITION = 'i.is_active AND i.current_stock <= i.minimum_stock';

export type DashboardStats = { totalItems: number; lowStockItems: number; totalValue: number; activeUsers: number };

export function dashboardService(db: Db) {
  return {
    /** Active items only; totalValue = sum(price x currentStock), computed in SQL and turned into a number at the edge. */
    async stats(): Promise<DashboardStats> {
      const { rows } = await db.raw<{ rows: { total_items: number; low_stock: number; total_value: string; active_users: number }[] }>(
        `SELECT count(*) AS total_items,
                count(*) FILTER (WHERE ${LOW_STOCK_CONDITION}) AS low_stock,
                coalesce(sum(i.price * i.current_stock), 0)::numeric(20,2)::text AS total_value,
                (SELECT count(*) FROM users WHERE is_active) AS active_users
           FROM items i WHERE i.is_active`,
      );
      const r = rows[0];
      return { totalItems: r.total_items, lowStockItems: r.low_stock, totalValue: Number(r.total_value), activeUsers: r.active_users };
    },

    /** lowest stock relative to the minimum first */
    async lowStock() {
      const { rows } = await db.raw<{
        rows: { id: number; name: string; sku: string; current_stock: string; minimum_stock: string; price: string; category_id: number; category_name: string; category_color: string | null }[];
      }>(
        `SELECT i.id, i.name, i.sku, i.current_stock, i.minimum_stock, i.price, c.id AS category_id, c.name AS category_name, c.color AS category_color
           FROM items i JOIN categories c ON c.id = i.category_id
          WHERE ${LOW_STOCK_CONDITION}
          ORDER BY i.current_stock - i.minimum_stock, i.name, i.id`,
      );
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        sku: r.sku,
        currentStock: quantityNumber(r.current_stock),
        minimumStock: quantityNumber(r.minimum_stock),
        price: r.price,
        category: { id: r.category_id, name: r.category_name, color: r.category_color },
      }));
    },

    /** every category, with its active items' count and value */
    async categoryStats() {
      const { rows } = await db.raw<{ rows: { id: number; name: string; color: string | null; item_count: number; total_value: string }[] }>(
        `SELECT c.id, c.name, c.color, count(i.id) AS item_count,
                coalesce(sum(i.price * i.current_stock), 0)::numeric(20,2)::text AS total_value
           FROM categories c LEFT JOIN items i ON i.category_id = c.id AND i.is_active
          GROUP BY c.id ORDER BY c.name, c.id`,
      );
      return rows.map((r) => ({
        category: { id: r.id, name: r.name, color: r.color },
        itemCount: r.item_count,
        totalValue: Number(r.total_value),
      }));
    },
  };
}
