import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { D } from '../../lib/money';
import { salesAnalytics, type Period } from '../sales/sales.analytics';
import { applySalesFilter, type SalesFilterInput } from '../sales/sales.filters';

/**
 * Spending figures from real sales. "Spent" is net of refunds (totalAmount - refundedAmount),
 * VAT included; aggregate figures are JSON numbers as the spec shows them.
 */
const NET = sql.raw('sum(s.total_amount - s.refunded_amount)');
const MONTH = sql.raw(`to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`);
const DEPARTMENT = sql.raw(`coalesce(nullif(c.cost_centre, ''), 'Unassigned')`);

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

export function mcpAnalyticsService(db: Db) {
  const raw = (fragment: ReturnType<typeof sql>) => toRaw(db, fragment);

  return {
    async chargeCodeAnalytics(filter: SalesFilterInput): Promise<ChargeCodeAnalyticsRecord> {
      const byCode = await applySalesFilter(db('sales as s'), filter)
        .groupBy('s.charge_code')
        .orderByRaw(raw(sql`${NET} DESC, s.charge_code`))
        .select<ChargeCodeAnalyticsRecord['byCode']>('s.charge_code', raw(sql`${NET}::text AS spent`), db.raw('count(*)::int AS sales'));
      const byMonth = await applySalesFilter(db('sales as s'), filter)
        .groupByRaw(raw(MONTH))
        .orderByRaw('1')
        .select<ChargeCodeAnalyticsRecord['byMonth']>(raw(sql`${MONTH} AS month`), raw(sql`${NET}::text AS spending`));
      return { total: byCode.reduce((sum, r) => sum.plus(r.spent), new D(0)), byCode, byMonth };
    },

    /** The best sellers (sales analytics) over a trailing period, or all time. */
    async topSellers(limit: number, period?: Period) {
      return { period: period ?? ('all' as const), items: await salesAnalytics(db).mostSoldItems(limit, period) };
    },

    /** Sales grouped by the cost centre of their charge code, highest net first. */
    departmentPerformance(filter: SalesFilterInput): Promise<DepartmentRow[]> {
      return applySalesFilter(db('sales as s').leftJoin('charge_codes as c', 'c.code', 's.charge_code'), filter)
        .groupByRaw(raw(DEPARTMENT))
        .orderByRaw(raw(sql`${NET} DESC, 1`))
        .select<DepartmentRow[]>(
          raw(sql`${DEPARTMENT} AS department`),
          db.raw('count(*)::int AS total_sales'),
          db.raw('sum(s.total_amount)::text AS total_amount'),
          db.raw('sum(s.refunded_amount)::text AS refunded_amount'),
          raw(sql`${NET}::text AS net_amount`),
          db.raw('count(DISTINCT s.charge_code)::int AS charge_codes'),
        );
    },
  };
}
