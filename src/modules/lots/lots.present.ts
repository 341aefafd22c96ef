import { quantityNumber } from '../../lib/money';
import { lotStatus } from './lots.picking';
import type { ExpiryChange, LotRow } from './lots.queries';
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

/** A lot with its item, as the lot.expiring and lot.expired webhook events carry it: its status the one reported. */
export type LotWithItem = Lot & { item: { id: number; sku: string; name: string } };

/** An expiry change the digest found, with its item: the record of the lot.expiring and lot.expired events. */
export type ExpiryChangeRecord = { lot: ExpiryChange; item: { id: number; sku: string; name: string } };

export const presentExpiryChange = ({ lot, item }: ExpiryChangeRecord): LotWithItem => ({
  id: lot.id,
  lotNumber: lot.lot_number,
  expiresOn: lot.expires_on,
  quantity: quantityNumber(lot.quantity),
  status: lot.status,
  receivedAt: lot.received_at.toISOString(),
  orderId: lot.order_id,
  supplierId: lot.supplier_id,
  createdAt: lot.created_at.toISOString(),
  item: { id: item.id, sku: item.sku, name: item.name },
});
