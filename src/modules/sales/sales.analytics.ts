import type { Db } from '../../db/knex';
import { amountNumber, D, quantityNumber } from '../../lib/money';
import { LOW_STOCK_CONDITION } from '../dashboard/dashboard.service';
import { findItemsForLines } from '../items/items.lookup';

export type Period = 'week' | 'month' | 'year';

/** Start of a trailing period (7, 30 or 365 days back); none means all time. */
export function periodStart(period: Period | undefined, now = new Date()): Date | undefined {
  if (!period) return undefined;
  const days = { week: 7, month: 30, year: 365 }[period];
  return new Date(now.getTime() - days * 86_400_000);
}

export function salesAnalytics(db: Db) {
  return {
    /**
     * Best sellers by quantity sold net of refunds; revenue is the net quantity at the sold
     * unit price (before VAT). Lines of deleted items stay counted under their sku.
     */
    async mostSoldItems(limit: number, period?: Period) {
      const since = periodStart(period);
      const query = db('sale_items as si')
        .join('sales as s', 's.id', 'si.sale_id')
        .groupBy('si.item_id', 'si.item_sku')
        .havingRaw('sum(si.quantity - si.refunded_quantity) > 0')
        .orderByRaw('sum(si.quantity - si.refunded_quantity) DESC, si.item_id')
        .limit(limit)
        .select(
          'si.item_id',
          'si.item_sku',
          db.raw('max(si.item_name) AS item_name'),
          db.raw('sum(si.quantity - si.refunded_quantity)::text AS total_quantity'),
          db.raw('round(sum((si.quantity - si.refunded_quantity) * si.unit_price), 2)::text AS total_revenue'),
          db.raw('count(DISTINCT s.id)::int AS sales_count'),
        );
      if (since) query.where('s.created_at', '>=', since);
      const rows = await query;
      return rows.map((r) => ({
        itemId: r.item_id as number | null,
        itemName: r.item_name as string,
        itemSku: r.item_sku as string,
        totalQuantity: quantityNumber(r.total_quantity),
        totalRevenue: amountNumber(r.total_revenue),
        salesCount: r.sales_count as number,
      }));
    },

    /** Whether current stock covers each requested quantity (two entries on one item are checked by their sum). */
    async stockCheck(requested: { itemId: number; quantity: string }[]) {
      const items = await findItemsForLines(db, requested.map((r) => r.itemId));
      const totals = new Map<number, D>();
      for (const r of requested) totals.set(r.itemId, (totals.get(r.itemId) ?? new D(0)).plus(r.quantity));
      const result = requested.map((r) => {
        const item = items.get(r.itemId);
        const available = item !== undefined && item.isActive && new D(item.currentStock).gte(totals.get(r.itemId)!);
        return {
          itemId: r.itemId,
          itemName: item?.name ?? null,
          available,
          currentStock: item ? quantityNumber(item.currentStock) : 0,
          requested: quantityNumber(r.quantity),
        };
      });
      return { allAvailable: result.every((r) => r.available), items: result };
    },

    /** Active items at or below their minimum stock, the largest shortfall first. */
    async lowStockReport() {
      const rows = await db('items as i')
        .leftJoin('categories as c', 'c.id', 'i.category_id')
        .whereRaw(LOW_STOCK_CONDITION)
        .orderByRaw('(i.minimum_stock - i.current_stock) DESC, i.name, i.id')
        .select('i.id', 'i.name', 'i.sku', 'i.price', 'i.current_stock', 'i.minimum_stock', 'c.id as category_id', 'c.name as category_name', 'c.color as category_color');
      return {
        items: rows.map((r) => ({
          id: r.id as number,
          name: r.name as string,
          sku: r.sku as string,
          price: r.price as string,
          currentStock: quantityNumber(r.current_stock),
          minimumStock: quantityNumber(r.minimum_stock),
          shortfall: quantityNumber(new D(r.minimum_stock).minus(r.current_stock)),
          category: r.category_id ? { id: r.category_id as number, name: r.category_name as string, color: r.category_color as string | null } : null,
        })),
        total: rows.length,
        generatedAt: new Date().toISOString(),
      };
    },
  };
}
