import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { itemsDueForCountSql } from '../items/items.queries';
import type { ReferenceCounters } from '../../db/references';

/*
 * What other modules (the dashboard) may ask of the stocktakes tables.
 */

/** The dashboard's count figures over the last `days` days. */
export type StockCountFigures = {
  days: number;
  /** lines of posted stocktakes counted in the period */
  linesCounted: number;
  /** of those, the lines whose count matched the expected stock */
  linesExact: number;
  /** linesExact / linesCounted as a percentage with one decimal place; null when nothing was counted */
  stockAccuracy: number | null;
  /** active items not counted by a posted stocktake in the period (never counted: overdue) */
  itemsOverdue: number;
};

/**
 * Stock accuracy (the share of the lines of posted stocktakes counted in the last `days` days
 * whose count matched the expected stock: a line zeroed at posting was not counted and does not
 * count) and how many active items are overdue for a count (the items module's kept figure).
 */
export async function stockCountFigures(db: Db, days = 90): Promise<StockCountFigures> {
  const { rows } = await preparedRaw<{ rows: { counted: number; exact: number; overdue: number }[] }>(
    db,
    sql`SELECT count(*)::int AS counted, count(*) FILTER (WHERE l.counted = l.expected)::int AS exact,
               ${itemsDueForCountSql(days)} AS overdue
          FROM stocktake_lines l JOIN stocktakes s ON s.id = l.stocktake_id
         WHERE s.status = 'posted' AND l.counted_at >= now() - make_interval(days => ${days}::int)`,
  );
  const { counted, exact, overdue } = rows[0];
  return {
    days,
    linesCounted: counted,
    linesExact: exact,
    stockAccuracy: counted === 0 ? null : Math.round((exact / counted) * 1000) / 10,
    itemsOverdue: overdue,
  };
}

/** The rows of stocktakes that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const stocktakesReferences: ReferenceCounters = {
  users: [
    {
      table: 'stocktake_counts',
      column: 'counted_by',
      count: (id) => sql`SELECT count(*) FROM stocktake_counts WHERE counted_by = ${id}`,
    },
    {
      table: 'stocktake_counts',
      column: 'undone_by',
      count: (id) => sql`SELECT count(*) FROM stocktake_counts WHERE undone_by = ${id}`,
    },
    {
      table: 'stocktake_lines',
      column: 'counted_by',
      count: (id) => sql`SELECT count(*) FROM stocktake_lines WHERE counted_by = ${id}`,
    },
    {
      table: 'stocktakes',
      column: 'cancelled_by',
      count: (id) => sql`SELECT count(*) FROM stocktakes WHERE cancelled_by = ${id}`,
    },
    {
      table: 'stocktakes',
      column: 'created_by',
      count: (id) => sql`SELECT count(*) FROM stocktakes WHERE created_by = ${id}`,
    },
    {
      table: 'stocktakes',
      column: 'posted_by',
      count: (id) => sql`SELECT count(*) FROM stocktakes WHERE posted_by = ${id}`,
    },
  ],
  items: [
    {
      table: 'stocktake_counts',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM stocktake_counts WHERE item_id = ${id}`,
    },
    {
      table: 'stocktake_lines',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM stocktake_lines WHERE item_id = ${id}`,
    },
  ],
};
