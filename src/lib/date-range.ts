import type { Knex } from 'knex';
import { sql, type Sql } from '../db/sql';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

type Bound = { op: '>=' | '<' | '<='; at: Date };

/**
 * An inclusive range given as dates or timestamps, as comparisons: a plain start date means the
 * start of that UTC day, a plain end date the whole of that UTC day.
 */
function boundsOf(start?: string, end?: string): Bound[] {
  const bounds: Bound[] = [];
  if (start) bounds.push({ op: '>=', at: new Date(DATE_ONLY.test(start) ? `${start}T00:00:00.000Z` : start) });
  if (end) {
    bounds.push(
      DATE_ONLY.test(end)
        ? { op: '<', at: new Date(Date.parse(`${end}T00:00:00.000Z`) + 86_400_000) }
        : { op: '<=', at: new Date(end) },
    );
  }
  return bounds;
}

/** Restricts a timestamp column of a query builder to the range (see boundsOf). */
export function whereInDateRange<Q extends Knex.QueryBuilder>(
  query: Q,
  column: string,
  start?: string,
  end?: string,
): Q {
  for (const { op, at } of boundsOf(start, end)) query.where(column, op, at);
  return query;
}

/** The same range as conditions on a timestamp column of a composed statement. */
export const inDateRange = (column: Sql, start?: string, end?: string): Sql[] =>
  boundsOf(start, end).map(({ op, at }) => sql`${column} ${sql.raw(op)} ${at}`);
