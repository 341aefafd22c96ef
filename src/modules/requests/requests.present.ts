import { D } from '../../lib/money';
import { presentJoinedUserRef, presentUserRef } from '../users/users.present';
import type { StockRequest, StockRequestPage } from './requests.schemas';
import type { RequestRecord } from './requests.records';
import { pageInfo } from '../../http/pagination';

/** The lines fulfilment handed out less of than was requested. */
export const shortfallOf = ({ lines }: Pick<RequestRecord, 'lines'>) =>
  lines
    .filter((l) => l.fulfilled_quantity !== null && new D(l.fulfilled_quantity).lt(l.quantity))
    .map((l) => ({
      itemId: l.item_id,
      itemName: l.item_name,
      requested: l.quantity,
      fulfilled: l.fulfilled_quantity!,
    }));

export function presentRequest(record: RequestRecord): StockRequest {
  const { request: r } = record;
  return {
    id: r.id,
    reference: r.reference,
    status: r.status,
    chargeCode: r.charge_code,
    items: record.lines.map((l) => ({
      itemId: l.item_id,
      itemName: l.item_name,
      itemSku: l.item_sku,
      quantity: l.quantity,
      unitPrice: l.unit_price,
      vatRate: l.vat_rate,
      total: l.total,
      short: l.short_at_submission,
      fulfilledQuantity: l.fulfilled_quantity,
    })),
    subtotalAmount: r.subtotal_amount,
    vatAmount: r.vat_amount,
    totalAmount: r.total_amount,
    notes: r.notes,
    neededBy: r.needed_by,
    requestedBy: presentUserRef(record.requester),
    approverEmail: record.approverEmail,
    saleId: r.sale_id,
    saleNumber: r.sale_number,
    shortfall: shortfallOf(record),
    deliveredTo: r.delivered_to,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    history: record.history.map((h) => ({
      status: h.status,
      at: h.at.toISOString(),
      by: presentJoinedUserRef(h.by_user, { email: h.u_email, firstName: h.u_first_name, lastName: h.u_last_name }),
      comment: h.comment,
    })),
  };
}

export const presentRequestPage = (
  { records, total }: { records: RequestRecord[]; total: number },
  page: number,
  limit: number,
): StockRequestPage => ({ requests: records.map(presentRequest), ...pageInfo(page, limit, total) });
