import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { whereInDateRange } from '../../lib/date-range';
import { containsPattern } from '../../db/like-pattern';

export type SalesFilterInput = { chargeCode?: string; startDate?: string; endDate?: string; unpaidOnly?: boolean };

/** A filter whose partial charge code was resolved to the codes it matches (every sale's code is a charge code's). */
export type ResolvedSalesFilter = Omit<SalesFilterInput, 'chargeCode'> & { chargeCodes?: string[] };

/**
 * Resolves the partial charge code against the charge codes (a handful of rows), so that the sales
 * are filtered by equality: the planner then reads them through sales(charge_code, created_at, id)
 * in date order instead of testing ILIKE on every sale of the range.
 */
export async function resolveSalesFilter(db: Db, { chargeCode, ...rest }: SalesFilterInput): Promise<ResolvedSalesFilter> {
  if (!chargeCode) return rest;
  const chargeCodes: string[] = await db('charge_codes').where('code', 'ilike', containsPattern(chargeCode)).orderBy('code').pluck('code');
  return { ...rest, chargeCodes };
}

/** The sales filters shared by the list, the reports, the CSV and the analytics (table alias s), given as typed or resolved. */
export function applySalesFilter<Q extends Knex.QueryBuilder>(query: Q, filter: SalesFilterInput | ResolvedSalesFilter): Q {
  if ('chargeCodes' in filter && filter.chargeCodes) query.whereIn('s.charge_code', filter.chargeCodes);
  if ('chargeCode' in filter && filter.chargeCode) query.where('s.charge_code', 'ilike', containsPattern(filter.chargeCode));
  whereInDateRange(query, 's.created_at', filter.startDate, filter.endDate);
  if (filter.unpaidOnly) query.where('s.is_paid', false);
  return query;
}
