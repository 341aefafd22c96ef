import type { Knex } from 'knex';

export type SalesFilterInput = { chargeCode?: string; startDate?: string; endDate?: string; unpaidOnly?: boolean };

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Start of the range: a plain date means the start of that UTC day. */
export const rangeStart = (value: string) => new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value);

/** End of the range, inclusive: a plain date means the whole of that UTC day. */
export function rangeEndExclusive(value: string): { at: Date; inclusive: boolean } {
  if (DATE_ONLY.test(value)) return { at: new Date(new Date(`${value}T00:00:00.000Z`).getTime() + 86_400_000), inclusive: false };
  return { at: new Date(value), inclusive: true };
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The sales filters shared by the list, the reports, the CSV and the analytics (table alias s). */
export function applySalesFilter<Q extends Knex.QueryBuilder>(query: Q, filter: SalesFilterInput): Q {
  if (filter.chargeCode) query.where('s.charge_code', 'ilike', `%${escapeLike(filter.chargeCode)}%`);
  if (filter.startDate) query.where('s.created_at', '>=', rangeStart(filter.startDate));
  if (filter.endDate) {
    const end = rangeEndExclusive(filter.endDate);
    query.where('s.created_at', end.inclusive ? '<=' : '<', end.at);
  }
  if (filter.unpaidOnly) query.where('s.is_paid', false);
  return query;
}
