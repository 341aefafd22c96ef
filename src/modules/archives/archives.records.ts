import { sql, type Sql } from '../../db/sql';
import { attachedNotesJson } from '../notes/notes.queries';
import { orderRecordJson, ordersAs } from '../orders/orders.queries';
import { salesAs, saleWithLinesJson } from '../sales/sales.queries';
import { stockMovementsAs } from '../stock-movements/stock-movements.queries';
import type { RecordType } from './archives.schemas';

/**
 * How each record type is read (`from`, its table under an alias) and becomes one line of an archive
 * file, as SQL over the row aliased `r` (an order's record as the orders module builds it).
 *
 * The whole row goes in as PostgreSQL stores it (to_jsonb: every column, snake_case, numerics
 * written exactly, timestamps with offset), so a column added later is archived without a change
 * here. Sales and orders carry their lines (`items`) and the notes attached to them
 * (`attached_notes`: orders already have a `notes` column), a sale's from the sales and notes modules' fragments; an order carries its invoice's
 * metadata (`invoice`: filename, size, sha256), never the PDF bytes.
 *
 * The same expression builds the file, measures it for the preview and re-reads a record at
 * purge time, where the md5 of the line tells whether it changed since it was archived.
 */
export const RECORD_LINES: Record<RecordType, { from: (alias: string) => Sql; line: Sql }> = {
  sales: {
    from: salesAs,
    line: sql`jsonb_build_object('type', 'sale', 'record', ${saleWithLinesJson('r')} || jsonb_build_object(
      'attached_notes', ${attachedNotesJson('sale', sql.raw('r.id'))}))::text`,
  },
  orders: {
    from: ordersAs,
    line: sql`jsonb_build_object('type', 'order', 'record', ${orderRecordJson('r')} || jsonb_build_object(
      'attached_notes', ${attachedNotesJson('order', sql.raw('r.id'))}))::text`,
  },
  stock_movements: {
    from: stockMovementsAs,
    line: sql.raw(`jsonb_build_object('type', 'stock_movement', 'record', to_jsonb(r))::text`),
  },
};

/**
 * Rows created more than the bound number of days before the transaction's start. Days of 24
 * hours: a calendar-day interval would shift by an hour across a DST change in the session's zone.
 */
export const cutoff = (days: number): Sql => sql`now() - make_interval(hours => 24 * ${days}::int)`;
export const olderThan = (days: number): Sql => sql`r.created_at < ${cutoff(days)}`;

/** The 16-byte md5 of a line, as archive_records.content_hash stores it. */
export const lineHash = (line: Sql): Sql => sql`decode(md5(${line}), 'hex')`;
