import { amountNumber, D } from '../../lib/money';
import type { ChargeCodeAnalytics, DepartmentPerformance, TopSellers } from './mcp-analytics.schemas';
import type { ChargeCodeAnalyticsRecord, DepartmentRow } from './mcp-analytics.service';
import type { MostSoldRow } from '../sales/sales.analytics';
import { presentMostSoldItems } from '../sales/sales.present';

/** Aggregate figures as JSON numbers; each code's share of the total in percent, 2 places. */
export function presentChargeCodeAnalytics({ total, byCode, byMonth }: ChargeCodeAnalyticsRecord): ChargeCodeAnalytics {
  return {
    totalSpending: total.toNumber(),
    chargeCodeBreakdown: byCode.map((r) => ({
      code: r.charge_code,
      spent: amountNumber(r.spent),
      percentage: total.isZero() ? 0 : new D(r.spent).times(100).dividedBy(total).toDecimalPlaces(2).toNumber(),
      salesCount: r.sales,
    })),
    monthlyTrends: byMonth.map((m) => ({ month: m.month, spending: amountNumber(m.spending) })),
  };
}

export const presentTopSellers = (topSellers: { period: TopSellers['period']; items: MostSoldRow[] }): TopSellers => ({
  period: topSellers.period,
  items: presentMostSoldItems(topSellers.items).items,
});

/** Amounts as JSON numbers; averageSale is the gross amount per sale, 2 places. */
export const presentDepartmentPerformance = (rows: DepartmentRow[]): DepartmentPerformance => ({
  departments: rows.map((r) => ({
    department: r.department,
    totalSales: r.total_sales,
    totalAmount: amountNumber(r.total_amount),
    refundedAmount: amountNumber(r.refunded_amount),
    netAmount: amountNumber(r.net_amount),
    averageSale: new D(r.total_amount).dividedBy(r.total_sales).toDecimalPlaces(2).toNumber(),
    chargeCodes: r.charge_codes,
  })),
});
