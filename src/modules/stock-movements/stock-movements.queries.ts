import type { Knex } from 'knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';

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

/** A movement's share of one lot (issue 42): signed as the movement's quantity (negative for what it took). */
export type MovementLot = { lotNumber: string; expiresOn: string | null; quantity: number };

/**
 * The lots each movement (`movementId`: an expression of the caller's statement, e.g. `m.id`) moved,
 * as a JSON array of MovementLot (`[]` for a movement of an untracked item), earliest expiry first:
 * a scalar subquery over stock_movement_lots' primary key, so a page of movements reads its lots in
 * its own statement.
 */
export const movementLotsJson = (movementId: Sql): Sql =>
  sql`(SELECT coalesce(json_agg(json_build_object('lotNumber', ml.lot_number, 'expiresOn', to_char(ml.expires_on, 'YYYY-MM-DD'),
                                                  'quantity', ml.quantity)
                                ORDER BY ml.expires_on NULLS LAST, ml.lot_number), '[]'::json)
         FROM stock_movement_lots ml WHERE ml.movement_id = ${movementId})`;

/** A movement of a reference with the lots it moved. */
export type ReferenceMovement = {
  id: number;
  referenceId: string;
  itemId: number | null;
  type: 'in' | 'out' | 'adjustment';
  lots: MovementLot[];
};

/**
 * The movements of these references (`referenceType`, e.g. 'sale', and their ids, e.g. sale
 * numbers), oldest first, each with the lots it moved: one statement for a page of sales.
 */
export async function movementsOfReferences(
  db: Db,
  referenceType: string,
  referenceIds: string[],
): Promise<ReferenceMovement[]> {
  if (referenceIds.length === 0) return [];
  const { rows } = await preparedRaw<{ rows: ReferenceMovement[] }>(
    db,
    sql`SELECT m.id, m.reference_id AS "referenceId", m.item_id AS "itemId", m.type, ${movementLotsJson(sql.raw('m.id'))} AS lots
          FROM stock_movements m
         WHERE m.reference_type = ${referenceType} AND m.reference_id = ANY(${[...new Set(referenceIds)]}::text[])
         ORDER BY m.id`,
  );
  return rows;
}

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
