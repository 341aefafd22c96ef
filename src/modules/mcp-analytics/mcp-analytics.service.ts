import type { Db } from '../../db/knex';
import { D } from '../../lib/money';
import { salesAnalytics, type Period } from '../sales/sales.analytics';
import { byDepartment, chargeCodeFigures, periodFigures } from '../sales/sales.figures';
import { resolveSalesFilter, type SalesFilterInput } from '../sales/sales.filters';

/** Net spending (a decimal string) per charge code, highest first, and per month (YYYY-MM, UTC), with the total. */
export type ChargeCodeAnalyticsRecord = {
  total: D;
  byCode: { charge_code: string; spent: string; sales: number }[];
  byMonth: { month: string; spending: string }[];
};

/** Sales per cost centre of their charge code ('Unassigned' without one); amounts are decimal strings. */
export type DepartmentRow = {
  department: string;
  total_sales: number;
  total_amount: string;
  refunded_amount: string;
  net_amount: string;
  charge_codes: number;
};

/**
 * Spending figures from real sales (the sales figures, read from their rollup). "Spent" is net of
 * refunds (totalAmount - refundedAmount), VAT included; aggregate figures are JSON numbers as the spec shows them.
 */
export function mcpAnalyticsService(db: Db) {
  return {
    async chargeCodeAnalytics(input: SalesFilterInput): Promise<ChargeCodeAnalyticsRecord> {
      const filter = await resolveSalesFilter(db, input);
      // by code first, so equal amounts keep the codes' order
      const byCode = (await chargeCodeFigures(db, filter))
        .sort((a, b) => new D(b.net_amount).comparedTo(a.net_amount))
        .map((g) => ({ charge_code: g.key, spent: g.net_amount, sales: g.sales }));
      const byMonth = (await periodFigures(db, filter, 'month')).map((g) => ({ month: g.key, spending: g.net_amount }));
      return { total: byCode.reduce((sum, r) => sum.plus(r.spent), new D(0)), byCode, byMonth };
    },

    /** The best sellers (sales analytics) over a trailing period, or all time. */
    async topSellers(limit: number, period?: Period) {
      return { period: period ?? ('all' as const), items: await salesAnalytics(db).mostSoldItems(limit, period) };
    },

    /** Sales grouped by the cost centre of their charge code, highest net first. */
    async departmentPerformance(filter: SalesFilterInput): Promise<DepartmentRow[]> {
      return byDepartment(await chargeCodeFigures(db, await resolveSalesFilter(db, filter)), 'netAmount').map((d) => ({
        department: d.department,
        total_sales: d.sales,
        total_amount: d.totalAmount.toFixed(2),
        refunded_amount: d.refundedAmount.toFixed(2),
        net_amount: d.netAmount.toFixed(2),
        charge_codes: d.chargeCodes,
      }));
    },
  };
}
