import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { applySalesFilter, type ResolvedSalesFilter } from './sales.filters';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** Figures of the sales sharing one key: how many, their totals, what was refunded and the rest (decimal strings), over how many charge codes. */
export type SalesFiguresRow = { key: string; sales: number; total_amount: string; refunded_amount: string; net_amount: string; charge_codes: number };

/** The key of a group, over the day-level figures f (charge_code, day) and their charge code c. */
const GROUPINGS = {
  chargeCode: 'f.charge_code',
  month: `to_char(f.day, 'YYYY-MM')`,
  department: `coalesce(nullif(c.cost_centre, ''), 'Unassigned')`,
} as const;

/** Largest first, ties by key. */
const ORDERS = { key: 'key', total: 'sum(f.total_amount) DESC, key', net: 'sum(f.total_amount) - sum(f.refunded_amount) DESC, key' } as const;

const floorToDay = (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
const ceilToDay = (t: Date) => new Date(Math.ceil(t.getTime() / DAY_MS) * DAY_MS);
const isoDay = (t: Date) => t.toISOString().slice(0, 10);

/**
 * The whole UTC days a filter's range covers, [from, to) as midnights (undefined: unbounded that
 * side), with the dates read as whereInDateRange reads them. A range inside one day gives from = to.
 */
function wholeDaysOf({ startDate, endDate }: ResolvedSalesFilter): { from?: Date; to?: Date } {
  const from = startDate ? ceilToDay(new Date(DATE_ONLY.test(startDate) ? `${startDate}T00:00:00.000Z` : startDate)) : undefined;
  // A plain end date ends on the next midnight; an end instant cuts its own day short.
  const to = endDate ? floorToDay(DATE_ONLY.test(endDate) ? new Date(Date.parse(`${endDate}T00:00:00.000Z`) + DAY_MS) : new Date(endDate)) : undefined;
  return { from, to: from && to && to < from ? from : to };
}

/**
 * The figures of the filtered sales per charge code, UTC month or department (the cost centre of
 * their charge code, 'Unassigned' without one), exactly as one aggregate over the sales would give
 * them: whole days come from the rollup sales_daily_totals (kept by triggers on sales in each
 * writing transaction), the partial days at the range's edges from the sales themselves. Keys
 * without any sale are left out.
 */
export async function salesFigures(
  db: Db,
  filter: ResolvedSalesFilter,
  by: keyof typeof GROUPINGS,
  order: keyof typeof ORDERS,
): Promise<SalesFiguresRow[]> {
  const days = wholeDaysOf(filter);
  // Counts and amounts of a rollup row whose sales are all gone are 0: such rows are skipped.
  const rollup = applySalesFilter(db('sales_daily_totals as s'), { chargeCodes: filter.chargeCodes, unpaidOnly: filter.unpaidOnly })
    .where('s.sales_count', '>', 0)
    .select('s.charge_code', 's.day', 's.sales_count', 's.total_amount', 's.refunded_amount');
  if (days.from) rollup.where('s.day', '>=', isoDay(days.from));
  if (days.to) rollup.where('s.day', '<', isoDay(days.to));
  const edge = (outsideWholeDays: (q: Knex.QueryBuilder) => Knex.QueryBuilder) =>
    outsideWholeDays(
      applySalesFilter(db('sales as s'), filter).select(
        's.charge_code',
        db.raw(`(s.created_at AT TIME ZONE 'UTC')::date AS day`),
        db.raw('1 AS sales_count'),
        's.total_amount',
        's.refunded_amount',
      ),
    );
  const edges: Knex.QueryBuilder[] = [];
  if (days.from) edges.push(edge((q) => q.where('s.created_at', '<', days.from!)));
  if (days.to) edges.push(edge((q) => q.where('s.created_at', '>=', days.to!)));
  const figures = db
    .queryBuilder()
    .from((edges.length > 0 ? rollup.unionAll(edges, true) : rollup).as('f'))
    .groupByRaw(GROUPINGS[by])
    .orderByRaw(ORDERS[order])
    .select(
      db.raw(`${GROUPINGS[by]} AS key`),
      db.raw('sum(f.sales_count)::int AS sales'),
      db.raw('sum(f.total_amount)::text AS total_amount'),
      db.raw('sum(f.refunded_amount)::text AS refunded_amount'),
      db.raw('(sum(f.total_amount) - sum(f.refunded_amount))::text AS net_amount'),
      db.raw('count(DISTINCT f.charge_code)::int AS charge_codes'),
    );
  if (by === 'department') figures.leftJoin('charge_codes as c', 'c.code', 'f.charge_code');
  const rows: SalesFiguresRow[] = await figures;
  return rows;
}
