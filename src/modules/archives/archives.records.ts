import type { Knex } from 'knex';
import { sql, type Sql } from '../../db/sql';
import { attachedNotesJson } from '../notes/notes.queries';
import { ordersArchive } from '../orders/orders.queries';
import { salesArchive } from '../sales/sales.queries';
import { stockMovementsArchive } from '../stock-movements/stock-movements.queries';
import type { RecordType } from './archives.schemas';

/**
 * An owner's part of an archive: its records as a subquery of named columns (`id`, `created_at`,
 * `record`, and the reasons a purge keeps one), and the purge of the records the caller's query
 * of ids names, in the caller's transaction.
 */
type ArchiveSource = { records: Sql; purge: (trx: Knex.Transaction, ids: Sql) => Promise<number> };

/** Sales and orders are also locked before a purge plans (a refund, payment or receipt locks them too). */
type LockedArchiveSource = ArchiveSource & { lock: (trx: Knex.Transaction, ids: Sql) => Promise<void> };

type RecordLines<S extends ArchiveSource> = { source: S; line: Sql };

/**
 * Each record type's owner (`source`) and how its record becomes one line of an archive file, as
 * SQL over the owner's record aliased `r`.
 *
 * The whole row goes in as PostgreSQL stores it (to_jsonb: every column, snake_case, numerics
 * written exactly, timestamps with offset), so a column added later is archived without a change
 * here. Sales and orders carry their lines (`items`) and the notes attached to them
 * (`attached_notes`: orders already have a `notes` column); an order carries its invoice's
 * metadata (`invoice`: filename, size, sha256), never the PDF bytes.
 *
 * The same expression builds the file, measures it for the preview and re-reads a record at
 * purge time, where the md5 of the line tells whether it changed since it was archived.
 */
export const RECORD_LINES: {
  [T in RecordType]: RecordLines<T extends 'stock_movements' ? ArchiveSource : LockedArchiveSource>;
} = {
  sales: {
    source: salesArchive,
    line: sql`jsonb_build_object('type', 'sale', 'record', r.record || jsonb_build_object(
      'attached_notes', ${attachedNotesJson('sale', sql.raw('r.id'))}))::text`,
  },
  orders: {
    source: ordersArchive,
    line: sql`jsonb_build_object('type', 'order', 'record', r.record || jsonb_build_object(
      'attached_notes', ${attachedNotesJson('order', sql.raw('r.id'))}))::text`,
  },
  stock_movements: {
    source: stockMovementsArchive,
    line: sql.raw(`jsonb_build_object('type', 'stock_movement', 'record', r.record)::text`),
  },
};

/** The records of a type as `alias`, for a statement of the archives. */
export const recordsOf = (type: RecordType, alias: string): Sql =>
  sql`${RECORD_LINES[type].source.records} ${sql.ident(alias)}`;

/**
 * Rows created more than the bound number of days before the transaction's start. Days of 24
 * hours: a calendar-day interval would shift by an hour across a DST change in the session's zone.
 */
export const cutoff = (days: number): Sql => sql`now() - make_interval(hours => 24 * ${days}::int)`;
export const olderThan = (days: number): Sql => sql`r.created_at < ${cutoff(days)}`;

/** The 16-byte md5 of a line, as archive_records.content_hash stores it. */
export const lineHash = (line: Sql): Sql => sql`decode(md5(${line}), 'hex')`;
