import { quantityNumber } from '../../lib/money';
import { presentJoinedUserRef } from '../users/users.present';
import type { MovementList, StockMovement } from './stock-movements.schemas';
import type { MovementReadRow } from './stock-movements.service';

/** A ledger entry: the item both flat and as an object, the performer both as an id and as a user reference. */
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
    lots: row.lots,
    createdAt: row.created_at.toISOString(),
  };
}

export const presentMovementList = (rows: MovementReadRow[]): MovementList => ({
  movements: rows.map(presentMovement),
});
