import type { Db } from '../../db/knex';
import { amountNumber, D } from '../../lib/money';
import { salesAnalytics, type Period } from '../sales/sales.analytics';
import { applySalesFilter, type SalesFilterInput } from '../sales/sales.filters';


/**
 * Spending figures from real sales. "Spent" is net of refunds (totalAmount - refundedAmount),
 * VAT included; aggregate figures are JSON numbers as the spec shows them.
 */
export function mcpAnalyticsService(db: Db) {
  const net = 'sum(s.total_amount - s.refunded_amount)';

  return {
    async chargeCodeAnalytics(filter: SalesFilterInput) {
      const breakdown = await applySalesFilter(db('sales as s'), filter)
        .groupBy('s.charge_code')
        .orderByRaw(`${net} DESC, s.charge_code`)
        .select('s.charge_code', db.raw(`${net}::text AS spent`), db.raw('count(*)::int AS sales'));
      const months = await applySalesFilter(db('sales as s'), filter)
        .groupByRaw(`to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`)
        .orderByRaw('1')
        .select(db.raw(`to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month`), db.raw(`${net}::text AS spending`));
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
      const dept = `coalesce(nullif(c.cost_centre, ''), 'Unassigned')`;
      const rows = await applySalesFilter(db('sales as s').leftJoin('charge_codes as c', 'c.code', 's.charge_code'), filter)
        .groupByRaw(dept)
        .orderByRaw(`sum(s.total_amount - s.refunded_amount) DESC, 1`)
        .select(
          db.raw(`${dept} AS department`),
          db.raw('count(*)::int AS total_sales'),
          db.raw('sum(s.total_amount)::text AS total_amount'),
          db.raw('sum(s.refunded_amount)::text AS refunded_amount'),
          db.raw(`${net}::text AS net_amount`),
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
