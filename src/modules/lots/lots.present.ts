import { quantityNumber } from '../../lib/money';
import { lotStatus } from './lots.picking';
import type { LotRow } from './lots.queries';
import type { Lot } from './lots.schemas';

export const presentLot = (row: LotRow, today: string, warningDays: number): Lot => ({
  id: row.id,
  lotNumber: row.lot_number,
  expiresOn: row.expires_on,
  quantity: quantityNumber(row.quantity),
  status: lotStatus(
    { expiresOn: row.expires_on, quarantined: row.quarantined_at !== null, quantity: row.quantity },
    today,
    warningDays,
  ),
  receivedAt: row.received_at.toISOString(),
  orderId: row.order_id,
  supplierId: row.supplier_id,
  createdAt: row.created_at.toISOString(),
});
