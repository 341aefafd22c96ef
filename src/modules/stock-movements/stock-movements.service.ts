import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import type { MovementRow } from './stock-movements.ledger';
import type { MovementQuery } from './stock-movements.schemas';
import { whereInDateRange } from '../../lib/date-range';
import { withUserRef } from '../users/users.queries';
import { sql, toRaw } from '../../db/sql';
import { movementLotsJson, type MovementLot } from './stock-movements.queries';

// The presenter lives in stock-movements.present.ts; this re-export stays only until
// items.present.ts imports it from there.

/** A movement's share of one lot (issue 42): the movement, and what it moved of the lot, signed (negative: taken). */
export type LotMovementRow = {
  id: number;
  type: MovementRow['type'];
  lot_quantity: string;
  reason: string;
  reference_type: string | null;
  reference_id: string | null;
  performed_by: string | null;
  created_at: Date;
};

export type MovementReadRow = MovementRow & {
  performer_email: string | null;
  performer_first_name: string | null;
  performer_last_name: string | null;
  /** the lots it moved (issue 42), [] for an untracked item */
  lots: MovementLot[];
};

/** Reads of the append-only ledger; writes go only through changeStock (stock-movements.ledger.ts). */
export function stockMovementsService(db: Db) {
  function base() {
    // each movement's lots in the page's own statement (a subquery per row over the lots' primary key)
    const lots = toRaw(db, sql`${movementLotsJson(sql.raw('m.id'))} AS lots`);
    return withUserRef(db('stock_movements as m').select<MovementReadRow[]>('m.*', lots), {
      userIdColumn: 'm.performed_by',
      prefix: 'performer_',
    });
  }

  /** The filter's conditions on stock_movements m. */
  function filtered<Q extends Knex.QueryBuilder>(query: Q, filter: Partial<MovementQuery>): Q {
    if (filter.itemId !== undefined) query.where('m.item_id', filter.itemId);
    if (filter.type) query.where('m.type', filter.type);
    whereInDateRange(query, 'm.created_at', filter.startDate, filter.endDate);
    if (filter.referenceType) query.where('m.reference_type', filter.referenceType);
    if (filter.referenceId) query.where('m.reference_id', filter.referenceId);
    return query;
  }

  return {
    /**
     * Newest first. Keyset pages: beforeId gives the movements older than that one, afterId the
     * `limit` movements just newer than that one (still answered newest first); offset skips that
     * many (a numbered page of an old link). No count: the ledger page shows no total.
     */
    async list(
      filter: Partial<MovementQuery> & { limit: number; beforeId?: number; afterId?: number; offset?: number },
    ): Promise<MovementReadRow[]> {
      const query = filtered(base(), filter).limit(filter.limit);
      if (filter.afterId !== undefined) {
        const newer = await query.where('m.id', '>', filter.afterId).orderBy('m.id', 'asc');
        return newer.reverse();
      }
      query.orderBy('m.id', 'desc');
      if (filter.beforeId !== undefined) query.where('m.id', '<', filter.beforeId);
      if (filter.offset) query.offset(filter.offset);
      return query;
    },

    /** The movements that moved the lot, oldest first, each with its share of the lot (stock_movement_lots_lot). */
    async ofLot(lotId: number): Promise<LotMovementRow[]> {
      return db('stock_movement_lots as ml')
        .join('stock_movements as m', 'm.id', 'ml.movement_id')
        .where('ml.lot_id', lotId)
        .orderBy('m.id')
        .select<LotMovementRow[]>(
          'm.id',
          'm.type',
          'ml.quantity as lot_quantity',
          'm.reason',
          'm.reference_type',
          'm.reference_id',
          'm.performed_by',
          'm.created_at',
        );
    },

    async byIds(ids: number[]): Promise<MovementReadRow[]> {
      if (ids.length === 0) return [];
      return base().whereIn('m.id', ids).orderBy('m.id');
    },
  };
}
