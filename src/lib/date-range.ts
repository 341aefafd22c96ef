import type { Knex } from 'knex';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Restricts a timestamp column to an inclusive range given as dates or timestamps: a plain
 * start date means the start of that UTC day, a plain end date the whole of that UTC day.
 */
export function whereInDateRange<Q extends Knex.QueryBuilder>(query: Q, column: string, start?: string, end?: string): Q {
  if (start) query.where(column, '>=', new Date(DATE_ONLY.test(start) ? `${start}T00:00:00.000Z` : start));
  if (end) {
    if (DATE_ONLY.test(end)) query.where(column, '<', new Date(Date.parse(`${end}T00:00:00.000Z`) + 86_400_000));
    else query.where(column, '<=', new Date(end));
  }
  return query;
}
