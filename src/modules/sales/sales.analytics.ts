import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { D } from '../../lib/money';
import { findItemsForLines, type ItemForLine } from '../items/items.queries';
import { lowStockItems, type LowStockItem } from '../items/items.queries';
import { stockForSale } from './sales.service';

export type Period = 'week' | 'month' | 'year';

/** Start of a trailing period (7, 30 or 365 days back); none means all time. */
export function periodStart(period: Period | undefined, now = new Date()): Date | undefined {
  if (!period) return undefined;
  const days = { week: 7, month: 30, year: 365 }[period];
  return new Date(now.getTime() - days * 86_400_000);
}

/** A best seller: quantities and revenue as decimal strings, net of refunds. */
export type MostSoldRow = {
  item_id: number | null;
  item_sku: string;
  item_name: string;
  total_quantity: string;
  total_revenue: string;
  sales_count: number;
};

/** One requested quantity and the item it asks for (undefined when unknown). */
/** One UK calendar day: YYYY-MM-DD, its number of sales and their value (a decimal string). */
export type DailySalesRow = { day: string; sales: number; value: string };

export type StockCheckLine = { itemId: number; item: ItemForLine | undefined; requested: string; available: boolean };

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
      const rows: MostSoldRow[] = await query;
      return rows;
    },

    /**
     * Sales per day (UK calendar days) for the last `days` days to `now`'s, that day included, a day
     * without sales as 0: the count and the value (totals with VAT, before refunds, as the report
     * sums them). Read from the rollup's UTC days, each moved to its UK day by the sales of the hour
     * between a UK and a UTC midnight (none in winter), so the cost does not grow with the sales.
     */
    async dailySales(days: number, now: Date = new Date()): Promise<DailySalesRow[]> {
      const { rows } = await toRaw<{ rows: DailySalesRow[] }>(
        db,
        sql`WITH uk AS (
              SELECT day, (day::timestamp AT TIME ZONE 'Europe/London') AS uk_start, (day::timestamp AT TIME ZONE 'UTC') AS utc_start,
                     ((day + 1)::timestamp AT TIME ZONE 'Europe/London') AS uk_end, ((day + 1)::timestamp AT TIME ZONE 'UTC') AS utc_end
                FROM (SELECT (${now}::timestamptz AT TIME ZONE 'Europe/London')::date - i AS day
                        FROM generate_series(0, ${days - 1}::int) i) days
            )
            SELECT to_char(uk.day, 'YYYY-MM-DD') AS day,
                   (utc.sales + early.sales - late.sales)::int AS sales,
                   CASE WHEN utc.sales + early.sales - late.sales = 0 THEN '0'
                        ELSE (utc.value + early.value - late.value)::text END AS value
              FROM uk
              CROSS JOIN LATERAL (
                SELECT coalesce(sum(t.sales_count), 0) AS sales, coalesce(sum(t.total_amount), 0) AS value
                  FROM sales_daily_totals t WHERE t.day = uk.day) utc
              CROSS JOIN LATERAL (
                SELECT count(*) AS sales, coalesce(sum(s.total_amount), 0) AS value
                  FROM sales s WHERE s.created_at >= uk.uk_start AND s.created_at < uk.utc_start) early
              CROSS JOIN LATERAL (
                SELECT count(*) AS sales, coalesce(sum(s.total_amount), 0) AS value
                  FROM sales s WHERE s.created_at >= uk.uk_end AND s.created_at < uk.utc_end) late
             ORDER BY uk.day`,
      );
      return rows;
    },

    /**
     * Whether what each item has for sale covers each requested quantity (two entries on one item are
     * checked by their sum): its stock, or for an item tracked by lot its sellable lots (stockForSale,
     * the rule a sale applies); an inactive item nothing.
     */
    async stockCheck(requested: { itemId: number; quantity: string }[]) {
      const items = await findItemsForLines(
        db,
        requested.map((r) => r.itemId),
      );
      const forSale = await stockForSale(db, items.values());
      const totals = new Map<number, D>();
      for (const r of requested) totals.set(r.itemId, (totals.get(r.itemId) ?? new D(0)).plus(r.quantity));
      return requested.map((r): StockCheckLine => {
        const item = items.get(r.itemId);
        return {
          itemId: r.itemId,
          item,
          requested: r.quantity,
          available: item !== undefined && forSale.get(item.id)!.gte(totals.get(r.itemId)!),
        };
      });
    },

    /**
     * Active items at or below their minimum stock (the items module's low-stock list), the
     * largest shortfall first.
     */
    lowStockReport: (): Promise<LowStockItem[]> => lowStockItems(db, 'shortfall'),
  };
}
