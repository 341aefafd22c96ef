import type { Db } from '../../db/knex';
import { quantityNumber } from '../../lib/money';
import type { MovementRow } from './stock-ledger';
import type { MovementQuery, StockMovement } from './stock-movements.schemas';
import { presentJoinedUserRef } from '../users/users.service';
import { whereInDateRange } from '../../lib/date-range';

export type MovementReadRow = MovementRow & {
  performer_email: string | null;
  performer_first_name: string | null;
  performer_last_name: string | null;
};

export function presentMovement(row: MovementReadRow): StockMovement {
  return {
    id: row.id,
    itemId: row.item_id,
    item: { id: row.item_id, name: row.item_name, sku: row.item_sku },
    itemName: row.item_name,
    itemSku: row.item_sku,
    type: row.type,
    quantity: quantityNumber(row.quantity),
    previousStock: quantityNumber(row.previous_stock),
    newStock: quantityNumber(row.new_stock),
    reason: row.reason,
    referenceType: row.reference_type,
    referenceId: row.reference_id,
    performedBy: row.performed_by,
    performer: presentJoinedUserRef(row.performed_by, {
      email: row.performer_email,
      firstName: row.performer_first_name,
      lastName: row.performer_last_name,
    }),
    createdAt: row.created_at.toISOString(),
  };
}

/** Reads of the append-only ledger; writes go only through changeStock (stock-ledger.ts). */
export function stockMovementsService(db: Db) {
  function base() {
    return db('stock_movements as m')
      .leftJoin('users as u', 'u.id', 'm.performed_by')
      .select<MovementReadRow[]>(
        'm.*',
        'u.email as performer_email',
        'u.first_name as performer_first_name',
        'u.last_name as performer_last_name',
      );
  }

  return {
    /** newest first */
    list(filter: Partial<MovementQuery> & { limit: number }): Promise<MovementReadRow[]> {
      const query = base().orderBy('m.id', 'desc').limit(filter.limit);
      if (filter.itemId !== undefined) query.where('m.item_id', filter.itemId);
      if (filter.type) query.where('m.type', filter.type);
      whereInDateRange(query, 'm.created_at', filter.startDate, filter.endDate);
      if (filter.referenceType) query.where('m.reference_type', filter.referenceType);
      if (filter.referenceId) query.where('m.reference_id', filter.referenceId);
      return query;
    },

    async byIds(ids: number[]): Promise<MovementReadRow[]> {
      if (ids.length === 0) return [];
      return base().whereIn('m.id', ids).orderBy('m.id');
    },
  };
}
