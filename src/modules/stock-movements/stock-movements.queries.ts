import type { Knex } from 'knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/*
 * The owner's fragments for other modules' statements that read the stock ledger (the system alerts,
 * the notifications, the archives). `itemId` and `referenceId` are expressions of the caller's
 * statement, e.g. its alias's column.
 */

/** The id of the item's last movement, NULL when it has none (a scalar subquery). */
export const lastMovementId = (itemId: Sql): Sql =>
  sql`(SELECT max(m.id) FROM stock_movements m WHERE m.item_id = ${itemId})`;

/** The stock level the item's last movement left, NULL when it has none (a scalar subquery, newest movement first by id). */
export const lastRecordedStock = (itemId: Sql): Sql =>
  sql`(SELECT m.new_stock FROM stock_movements m WHERE m.item_id = ${itemId} ORDER BY m.id DESC LIMIT 1)`;

/** Whether a movement after `afterMovementId` (NULL: any) left the item above `level`. */
export const movedAbove = (itemId: Sql, afterMovementId: Sql, level: Sql): Sql => sql`EXISTS (
  SELECT 1 FROM stock_movements m
   WHERE m.item_id = ${itemId} AND m.id > coalesce(${afterMovementId}, 0) AND m.new_stock > ${level})`;

/**
 * The stock ledger's part of an archive (the archives module): `records` is every movement as the
 * archive reads it, a subquery of named columns: `id`, `created_at`, `record` (the row whole as
 * PostgreSQL stores it, to_jsonb) and the reason a purge keeps it (`latest_of_item`: the last
 * movement of its item, which the item's stock is checked against). `purge` takes the movements
 * of the caller's query of ids, in the caller's transaction.
 */
export const stockMovementsArchive = {
  records: sql`(SELECT r.id, r.created_at, to_jsonb(r) AS record,
                       r.item_id IS NOT NULL AND r.id = ${lastMovementId(sql.raw('r.item_id'))} AS latest_of_item
                  FROM stock_movements r)`,
  /** Deletes the movements; how many. */
  async purge(trx: Knex.Transaction, ids: Sql): Promise<number> {
    return (await toRaw<{ rowCount: number }>(trx, sql`DELETE FROM stock_movements WHERE id IN (${ids})`)).rowCount;
  },
};

/** The ids of the movements whose reference names this record (`referenceType`, and `referenceId`: an expression of the caller's statement), as rows (id). */
export const movementsReferencing = (referenceType: string, referenceId: Sql): Sql =>
  sql`SELECT m.id FROM stock_movements m WHERE m.reference_type = ${referenceType} AND m.reference_id = ${referenceId}`;

/**
 * Whether a movement of the item after `afterMovementId`, up to `upToMovementId`, took it from above
 * `level` to at or below it (a crossing of its minimum, for the low-stock digest).
 */
export const crossedDownTo = (itemId: Sql, afterMovementId: Sql, upToMovementId: Sql, level: Sql): Sql => sql`EXISTS (
  SELECT 1 FROM stock_movements m
   WHERE m.item_id = ${itemId} AND m.id > ${afterMovementId} AND m.id <= ${upToMovementId}
     AND m.previous_stock > ${level} AND m.new_stock <= ${level})`;

/** The id of the last movement made at or before `at`, 0 when none (a scalar subquery over the created_at index). */
export const lastMovementIdAt = (at: Sql): Sql =>
  sql`coalesce((SELECT m.id FROM stock_movements m WHERE m.created_at <= ${at} ORDER BY m.created_at DESC, m.id DESC LIMIT 1), 0)`;

/** The rows of the stock ledger that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const stockMovementsReferences: ReferenceCounters = {
  users: [
    {
      table: 'stock_movements',
      column: 'performed_by',
      count: (id) => sql`SELECT count(*) FROM stock_movements WHERE performed_by = ${id}`,
    },
  ],
  items: [
    {
      table: 'stock_movements',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM stock_movements WHERE item_id = ${id}`,
    },
  ],
};
