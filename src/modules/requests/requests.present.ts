import { presentJoinedUserRef, presentUserRef } from '../users/users.present';
import type { ShortReason, StockRequest, StockRequestPage } from './requests.schemas';
import type { RequestRecord } from './requests.records';
import { pageInfo } from '../../http/pagination';

type Line = RequestRecord['lines'][number];

/** Why a line is short, as the pages and the emails say it. */
export const SHORT_REASON_TEXT: Record<ShortReason, string> = {
  stock: 'stock ran short',
  staff: 'the stores lowered the quantity',
};

/**
 * Why a line is short, or null: once fulfilled, the reason recorded for handing out less than
 * requested; before, 'stock' when more was requested than was in stock at submission.
 */
const shortReasonOf = (line: Line): ShortReason | null =>
  line.fulfilled_quantity !== null ? line.short_reason : line.short_at_submission ? 'stock' : null;

/** The lines fulfilment handed out less of than was requested, and why. */
export const shortfallOf = ({ lines }: Pick<RequestRecord, 'lines'>) =>
  lines.flatMap((l) =>
    l.fulfilled_quantity !== null && l.short_reason !== null
      ? [
          {
            itemId: l.item_id,
            itemName: l.item_name,
            requested: l.quantity,
            fulfilled: l.fulfilled_quantity,
            reason: l.short_reason,
          },
        ]
      : [],
  );

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
      short: shortReasonOf(l) !== null,
      shortReason: shortReasonOf(l),
      fulfilledQuantity: l.fulfilled_quantity,
    })),
    subtotalAmount: r.subtotal_amount,
    vatAmount: r.vat_amount,
    totalAmount: r.total_amount,
    chargedTotal: r.charged_total,
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
