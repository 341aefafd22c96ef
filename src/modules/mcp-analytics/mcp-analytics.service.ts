import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { amountNumber, D } from '../../lib/money';
import { salesAnalytics, type Period } from '../sales/sales.analytics';
import { applySalesFilter, type SalesFilterInput } from '../sales/sales.filters';


/**
 * Spending figures from real sales. "Spent" is net of refunds (totalAmount - refundedAmount),
 * VAT included; aggregate figures are JSON numbers as the spec shows them.
 */
const NET = sql.raw('sum(s.total_amount - s.refunded_amount)');
const MONTH = sql.raw(`to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`);
const DEPARTMENT = sql.raw(`coalesce(nullif(c.cost_centre, ''), 'Unassigned')`);

export function mcpAnalyticsService(db: Db) {
  const raw = (fragment: ReturnType<typeof sql>) => toRaw(db, fragment);

  return {
    async chargeCodeAnalytics(filter: SalesFilterInput) {
      const breakdown = await applySalesFilter(db('sales as s'), filter)
        .groupBy('s.charge_code')
        .orderByRaw(raw(sql`${NET} DESC, s.charge_code`))
        .select<{ charge_code: string; spent: string; sales: number }[]>('s.charge_code', raw(sql`${NET}::text AS spent`), db.raw('count(*)::int AS sales'));
      const months = await applySalesFilter(db('sales as s'), filter)
        .groupByRaw(raw(MONTH))
        .orderByRaw('1')
        .select<{ month: string; spending: string }[]>(raw(sql`${MONTH} AS month`), raw(sql`${NET}::text AS spending`));
      const total = breakdown.reduce((sum, r) => sum.plus(r.spent), new D(0));
      return {
        totalSpending: total.toNumber(),
        chargeCodeBreakdown: breakdown.map((r) => ({
          code: r.charge_code as string,
          spent: amountNumber(r.spent),
          percentage: total.isZero() ? 0 : new D(r.spent).times(100).dividedBy(total).toDecimalPlaces(2).toNumber(),
          salesCount: r.sales as number,
        })),
        monthlyTrends: months.map((m) => ({ month: m.month as string, spending: amountNumber(m.spending) })),
      };
    },

    async topSellers(limit: number, period?: Period) {
      return { period: period ?? 'all', items: await salesAnalytics(db).mostSoldItems(limit, period) };
    },

    /** Sales grouped by the cost centre of their charge code. */
    async departmentPerformance(filter: SalesFilterInput) {
      const rows = await applySalesFilter(db('sales as s').leftJoin('charge_codes as c', 'c.code', 's.charge_code'), filter)
        .groupByRaw(raw(DEPARTMENT))
        .orderByRaw(raw(sql`${NET} DESC, 1`))
        .select<{ department: string; total_sales: number; total_amount: string; refunded_amount: string; net_amount: string; charge_codes: number }[]>(
          raw(sql`${DEPARTMENT} AS department`),
          db.raw('count(*)::int AS total_sales'),
          db.raw('sum(s.total_amount)::text AS total_amount'),
          db.raw('sum(s.refunded_amount)::text AS refunded_amount'),
          raw(sql`${NET}::text AS net_amount`),
          db.raw('count(DISTINCT s.charge_code)::int AS charge_codes'),
        );
      return {
        departments: rows.map((r) => ({
          department: r.department as string,
          totalSales: r.total_sales as number,
          totalAmount: amountNumber(r.total_amount),
          refundedAmount: amountNumber(r.refunded_amount),
          netAmount: amountNumber(r.net_amount),
          averageSale: new D(r.total_amount).dividedBy(r.total_sales).toDecimalPlaces(2).toNumber(),
          chargeCodes: r.charge_codes as number,
        })),
      };
    },
  };
}
