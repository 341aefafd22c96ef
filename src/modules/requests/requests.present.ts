import { isStaff } from '../../auth/guards';
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
 * Who reads a request: the stores' staff (and the events sent to the admins' webhooks) see the
 * whole picture; anyone else (a requester, an approver) never a comparison with the stock figure.
 */
export type RequestAudience = 'staff' | 'requester';
export const audienceOf = (user: Express.User): RequestAudience => (isStaff(user) ? 'staff' : 'requester');

/**
 * Why a line is short, or null: once fulfilled, the reason recorded for handing out less than
 * requested; before, for the staff only, 'stock' when more was requested than was in stock at
 * submission (issue 40: a requester sees the item's availability instead, as the catalogue says it).
 */
const shortReasonOf = (line: Line, audience: RequestAudience): ShortReason | null => {
  if (line.fulfilled_quantity !== null) return line.short_reason;
  return audience === 'staff' && line.short_at_submission ? 'stock' : null;
};

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

export function presentRequest(record: RequestRecord, audience: RequestAudience): StockRequest {
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
      short: shortReasonOf(l, audience) !== null,
      shortReason: shortReasonOf(l, audience),
      availability: record.availability.get(l.id) ?? null,
      fulfilledQuantity: l.fulfilled_quantity,
      sdsAcknowledged: l.sds_acknowledged,
    })),
    subtotalAmount: r.subtotal_amount,
    vatAmount: r.vat_amount,
    totalAmount: r.total_amount,
    chargedTotal: r.charged_total,
    notes: r.notes,
    neededBy: r.needed_by,
    requestedBy: presentUserRef(record.requester),
    approverEmail: record.approverEmail,
    coshhReference: r.coshh_reference,
    restrictedApproval: {
      required: r.restricted_approval_required,
      approvedBy: record.restrictedApprover ? presentUserRef(record.restrictedApprover) : null,
      approvedAt: r.restricted_approved_at?.toISOString() ?? null,
    },
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
  audience: RequestAudience,
): StockRequestPage => ({
  requests: records.map((record) => presentRequest(record, audience)),
  ...pageInfo(page, limit, total),
});
