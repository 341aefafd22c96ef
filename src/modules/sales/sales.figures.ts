import type { Db } from '../../db/knex';
import { D } from '../../lib/money';
import { sql, type Sql } from '../../db/sql';
import { chargeCodeByCode, costCentreOf } from '../chargecodes/chargecodes.queries';
import { salesRaw, salesWhere, type ResolvedSalesFilter } from './sales.filters';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** Figures of the sales sharing one key: how many, their totals, what was refunded and the rest (decimal strings). */
export type SalesFiguresRow = {
  key: string;
  sales: number;
  total_amount: string;
  refunded_amount: string;
  net_amount: string;
};

/** The figures of one charge code's sales, with the code's cost centre (null or '' without one). */
export type ChargeCodeFiguresRow = SalesFiguresRow & { cost_centre: string | null };

/** Figures of the sales per department: the cost centre of their charge code ('Unassigned' without one). */
export type DepartmentFigures = {
  department: string;
  sales: number;
  totalAmount: D;
  refundedAmount: D;
  netAmount: D;
  chargeCodes: number;
};

const floorToDay = (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
const ceilToDay = (t: Date) => new Date(Math.ceil(t.getTime() / DAY_MS) * DAY_MS);
const isoDay = (t: Date) => t.toISOString().slice(0, 10);

/**
 * The whole UTC days a filter's range covers, [from, to) as midnights (undefined: unbounded that
 * side), with the dates read as salesWhere reads them. A range inside one day gives from = to.
 */
function wholeDaysOf({ startDate, endDate }: ResolvedSalesFilter): { from?: Date; to?: Date } {
  const from = startDate
    ? ceilToDay(new Date(DATE_ONLY.test(startDate) ? `${startDate}T00:00:00.000Z` : startDate))
    : undefined;
  // A plain end date ends on the next midnight; an end instant cuts its own day short.
  const to = endDate
    ? floorToDay(
        DATE_ONLY.test(endDate) ? new Date(Date.parse(`${endDate}T00:00:00.000Z`) + DAY_MS) : new Date(endDate),
      )
    : undefined;
  return { from, to: from && to && to < from ? from : to };
}

/** The figures of the sales matching `where`, a row per sale, as the rollup's rows give them per day. */
const saleFigures = (where: Sql) =>
  sql`SELECT s.charge_code, (s.created_at AT TIME ZONE 'UTC')::date AS day, 1 AS sales_count, s.total_amount, s.refunded_amount
        FROM sales s WHERE ${where}`;

/**
 * The filtered sales as day-level figures f (charge_code, day, sales_count, total_amount,
 * refunded_amount), summing exactly as the sales themselves would: whole days come from the rollup
 * sales_daily_totals (kept by triggers on sales in each writing transaction), the partial days at
 * the range's edges from the sales. A search picks single sales, which the rollup cannot tell
 * apart: the figures of a search come from the sales it finds (through its indexes).
 */
function dayFigures(filter: ResolvedSalesFilter): Sql {
  if (filter.search) return sql`(${saleFigures(salesWhere(filter))}) AS f`;
  const days = wholeDaysOf(filter);
  // A key's figures are the sum of its slots (see the rollup's migration), summed by the callers.
  const rollupWhere = [salesWhere({ chargeCodes: filter.chargeCodes, unpaidOnly: filter.unpaidOnly })];
  if (days.from) rollupWhere.push(sql`s.day >= ${isoDay(days.from)}::date`);
  if (days.to) rollupWhere.push(sql`s.day < ${isoDay(days.to)}::date`);
  const parts = [
    sql`SELECT s.charge_code, s.day, s.sales_count, s.total_amount, s.refunded_amount
          FROM sales_daily_totals s WHERE ${sql.join(rollupWhere, sql.raw(' AND '))}`,
  ];
  const edge = (outsideWholeDays: Sql) => saleFigures(sql`${salesWhere(filter)} AND ${outsideWholeDays}`);
  if (days.from) parts.push(edge(sql`s.created_at < ${days.from}`));
  if (days.to) parts.push(edge(sql`s.created_at >= ${days.to}`));
  return sql`(${sql.join(parts, sql.raw(' UNION ALL '))}) AS f`;
}

const FIGURES =
  sql.raw(`sum(f.sales_count)::int AS sales, sum(f.total_amount)::text AS total_amount, sum(f.refunded_amount)::text AS refunded_amount,
  (sum(f.total_amount) - sum(f.refunded_amount))::text AS net_amount`);
/** A group whose rollup rows sum to no sale (all deleted, or moved out) is left out, as a straight aggregate has no such group. */
const WITH_SALES = sql.raw('sum(f.sales_count) > 0');

/** The statement of chargeCodeFigures, for a caller that reads it with other things in one statement. */
export const chargeCodeFiguresSql = (filter: ResolvedSalesFilter): Sql =>
  sql`SELECT f.charge_code AS key, ${costCentreOf('c')}, ${FIGURES}
        FROM ${dayFigures(filter)} LEFT JOIN ${chargeCodeByCode('c', sql.raw('f.charge_code'))}
       GROUP BY f.charge_code, ${costCentreOf('c')} HAVING ${WITH_SALES} ORDER BY f.charge_code`;

/** The figures of the filtered sales per charge code (codes without a sale left out), by code. */
export async function chargeCodeFigures(db: Db, filter: ResolvedSalesFilter): Promise<ChargeCodeFiguresRow[]> {
  const { rows } = await salesRaw<{ rows: ChargeCodeFiguresRow[] }>(db, filter, chargeCodeFiguresSql(filter));
  return rows;
}

const PERIOD_KEY = { month: 'YYYY-MM', day: 'YYYY-MM-DD' } as const;

/** The figures of the filtered sales per UTC month (key YYYY-MM) or day (YYYY-MM-DD), oldest first. */
export async function periodFigures(
  db: Db,
  filter: ResolvedSalesFilter,
  period: keyof typeof PERIOD_KEY,
): Promise<SalesFiguresRow[]> {
  const { rows } = await salesRaw<{ rows: SalesFiguresRow[] }>(
    db,
    filter,
    sql`SELECT to_char(f.day, ${sql.raw(`'${PERIOD_KEY[period]}'`)}) AS key, ${FIGURES} FROM ${dayFigures(filter)} GROUP BY 1 HAVING ${WITH_SALES} ORDER BY 1`,
  );
  return rows;
}

/**
 * Per-charge-code figures summed per department, the largest `by` amount first; ties by name in
 * code-point order (as PostgreSQL's C collation sorts them).
 */
export function byDepartment(codes: ChargeCodeFiguresRow[], by: 'totalAmount' | 'netAmount'): DepartmentFigures[] {
  const departments = new Map<string, DepartmentFigures>();
  for (const code of codes) {
    const department = code.cost_centre || 'Unassigned';
    const entry = departments.get(department) ?? {
      department,
      sales: 0,
      totalAmount: new D(0),
      refundedAmount: new D(0),
      netAmount: new D(0),
      chargeCodes: 0,
    };
    entry.sales += code.sales;
    entry.totalAmount = entry.totalAmount.plus(code.total_amount);
    entry.refundedAmount = entry.refundedAmount.plus(code.refunded_amount);
    entry.netAmount = entry.netAmount.plus(code.net_amount);
    entry.chargeCodes += 1;
    departments.set(department, entry);
  }
  return [...departments.values()].sort(
    (a, b) => b[by].comparedTo(a[by]) || (a.department < b.department ? -1 : a.department > b.department ? 1 : 0),
  );
}
