import type { Knex } from 'knex';
import { whereInDateRange } from '../../lib/date-range';
import { containsPattern } from '../../db/like-pattern';

export type SalesFilterInput = { chargeCode?: string; startDate?: string; endDate?: string; unpaidOnly?: boolean };


/** The sales filters shared by the list, the reports, the CSV and the analytics (table alias s). */
export function applySalesFilter<Q extends Knex.QueryBuilder>(query: Q, filter: SalesFilterInput): Q {
  if (filter.chargeCode) query.where('s.charge_code', 'ilike', containsPattern(filter.chargeCode));
  whereInDateRange(query, 's.created_at', filter.startDate, filter.endDate);
  if (filter.unpaidOnly) query.where('s.is_paid', false);
  return query;
}
