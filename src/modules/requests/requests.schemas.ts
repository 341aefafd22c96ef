import { z } from 'zod';
import '../../http/openapi';
import { IntId, QueryBoolean } from '../../http/validate';
import { limitParam, PageParam } from '../../http/pagination';
import { LineRequest } from '../sales/quotes.schemas';
import { CoshhReference } from '../sales/sales.schemas';
import { UserRef } from '../users/users.schemas';
import { Availability } from '../catalogue/catalogue.schemas';

/** A request's states (issue 33), in the order a request usually passes them. */
export const REQUEST_STATUSES = [
  'submitted',
  'awaiting_approval',
  'approved',
  'rejected',
  'ready',
  'collected',
  'cancelled',
] as const;
export const RequestStatus = z.enum(REQUEST_STATUSES).openapi({
  description:
    "submitted -> awaiting_approval (total over the code's approvalThreshold) -> approved | rejected; submitted/approved -> ready (fulfilled) -> collected; cancelled from any state before ready",
});
export type RequestStatus = z.infer<typeof RequestStatus>;

/** Why a line was handed out short: the stores held fewer than requested (stock), or held enough and handed out fewer (staff). */
export const SHORT_REASONS = ['stock', 'staff'] as const;
export const ShortReason = z.enum(SHORT_REASONS).openapi({
  description:
    'stock: the stores held fewer than requested (at submission, or at fulfilment); staff: they held enough but handed out fewer (the quantity lowered, or the line left out, at fulfilment)',
});
export type ShortReason = z.infer<typeof ShortReason>;

export const RequestIdParams = z.object({ id: IntId });

const Comment = z.string().trim().max(2000, { error: 'must be at most 2000 characters' });

/** A requested line; issue 43: the requester's confirmation that they read the item's safety data sheet. */
export const RequestLineInput = LineRequest.extend({
  sdsAcknowledged: z
    .boolean({ error: 'must be a boolean' })
    .optional()
    .openapi({
      description:
        'issue 43: the requester confirms "I have read the safety data sheet" of this item; required (true) for a hazardous item ' +
        '(any pictogram or H statement): without it 400 "Confirm you have read the safety data sheet of <SKU> before submitting" (the first such line), ' +
        'checked after the charge code and the COSHH reference. Default false; recorded on the line',
    }),
});

export const CreateRequest = z.object({
  chargeCode: z.string().trim().min(1, { error: 'is required' }).max(64),
  items: z
    .array(RequestLineInput)
    .min(1, { error: 'must contain at least one item' })
    .max(200, { error: 'must contain at most 200 items' }),
  notes: Comment.nullable().optional(),
  neededBy: z.iso
    .date({ error: 'must be a date (YYYY-MM-DD)' })
    .nullable()
    .optional()
    .openapi({ description: 'when the requester needs the items by (YYYY-MM-DD)' }),
  coshhReference: CoshhReference.optional().openapi({
    description:
      'issue 43: the COSHH assessment reference (1 to 100 characters), required when any item (or its category) has coshhRequired: ' +
      'without it 400 "A COSHH assessment reference is required for <SKU>" (the first such line), checked after the charge code. Carried to the sale',
  }),
});
export type CreateRequest = z.infer<typeof CreateRequest>;

export const DecisionBody = z.object({ comment: Comment.optional() });
export type DecisionBody = z.infer<typeof DecisionBody>;

export const FulfilBody = z.object({
  items: z.array(LineRequest).min(1, { error: 'must contain at least one item' }).optional().openapi({
    description:
      "the quantities to hand out, per item of the request (at most what was requested); omitted: the request's own. A line left out is not handed out.",
  }),
  coshhReference: CoshhReference.optional().openapi({
    description:
      "issue 43: the COSHH assessment reference the sale is made under; omitted: the request's own (needed when an item or its category has coshhRequired)",
  }),
});
export type FulfilBody = z.infer<typeof FulfilBody>;

export const CollectBody = z.object({
  deliveredTo: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(200)
    .optional()
    .openapi({ description: "who collected the goods; omitted: the requester's name" }),
});
export type CollectBody = z.infer<typeof CollectBody>;

export const CancelBody = z.object({ comment: Comment.optional() });
export type CancelBody = z.infer<typeof CancelBody>;

export const RequestQuery = z.object({
  status: RequestStatus.optional(),
  mine: QueryBoolean.optional().openapi({
    type: 'boolean',
    description: 'only the requests the signed-in person made',
  }),
  restrictedToApprove: QueryBoolean.optional().openapi({
    type: 'boolean',
    description:
      "issue 43: only the open requests (submitted, awaiting_approval, approved) holding a restricted substance and awaiting a manager's approval, not the person's own",
  }),
  toApprove: QueryBoolean.optional().openapi({
    type: 'boolean',
    description:
      "only the requests awaiting the signed-in person's approval (their email is the code's approverEmail; an admin: every request awaiting approval)",
  }),
  page: PageParam,
  limit: limitParam(50, 200),
});
export type RequestQuery = z.infer<typeof RequestQuery>;

export const RequestLine = z
  .object({
    itemId: z.number().int().nullable().openapi({ description: 'null once the item was deleted' }),
    itemName: z.string(),
    itemSku: z.string(),
    quantity: z.string().openapi({ description: 'decimal string: the quantity requested' }),
    unitPrice: z.string(),
    vatRate: z.string(),
    total: z.string().openapi({ description: 'the line total, VAT included' }),
    short: z.boolean().openapi({
      description:
        'fulfilled: less was handed out than requested, for any reason; before fulfilment, for the stores staff only: more was requested ' +
        'than was for sale at submission (an item tracked by lot: its lots neither expired nor quarantined; anyone else: false, ' +
        'availability says how the item stands)',
    }),
    shortReason: ShortReason.nullable().openapi({ description: 'why the line is short; null when it is not' }),
    availability: Availability.nullable().openapi({
      description:
        "before fulfilment: the item's availability now by the catalogue's rule, of what it has for sale (an item tracked by lot: " +
        'its sellable lots) (in_stock, low, out; never the stock figure); ' +
        'null once fulfilled or when the item was deleted',
    }),
    fulfilledQuantity: z
      .string()
      .nullable()
      .openapi({ description: 'what fulfilment handed out (less than quantity when short); null before fulfilment' }),
    sdsAcknowledged: z.boolean().openapi({
      description:
        'issue 43: the requester confirmed at submission that they had read the safety data sheet of the item',
    }),
  })
  .openapi('RequestLine');

export const RequestHistoryEntry = z
  .object({
    status: RequestStatus,
    at: z.string().datetime(),
    by: UserRef.nullable(),
    comment: z.string().nullable(),
  })
  .openapi('RequestHistoryEntry');

export const RequestShortfall = z
  .object({
    itemId: z.number().int().nullable(),
    itemName: z.string(),
    requested: z.string(),
    fulfilled: z.string(),
    reason: ShortReason,
  })
  .openapi('RequestShortfall');

export const RestrictedApproval = z
  .object({
    required: z.boolean().openapi({
      description:
        'the request held a restricted substance when it was submitted: it waits for a manager, on top of any charge-code approval',
    }),
    approvedBy: UserRef.nullable().openapi({ description: 'the manager (or admin) who approved it; null until then' }),
    approvedAt: z.string().datetime().nullable(),
  })
  .openapi('RestrictedApproval', {
    description:
      'Issue 43: the manager approval of a request holding a restricted substance (POST /api/requests/{id}/approve-restricted). ' +
      'Fulfilment is refused (409) while required and not approved; the charge-code approval (status awaiting_approval -> approved) is separate and also needed',
  });

export const StockRequest = z
  .object({
    id: z.number().int(),
    reference: z.string().openapi({ example: 'RQ-20261127-42' }),
    status: RequestStatus,
    chargeCode: z.string(),
    items: z.array(RequestLine),
    subtotalAmount: z.string(),
    vatAmount: z.string(),
    totalAmount: z.string().openapi({ description: 'the total asked (VAT included), as priced at submission' }),
    chargedTotal: z.string().nullable().openapi({
      description:
        "what fulfilment charged: its sale's total (VAT included), less than totalAmount when lines were short; null until fulfilled",
      example: '67.56',
    }),
    notes: z.string().nullable(),
    neededBy: z.string().nullable(),
    requestedBy: UserRef,
    approverEmail: z
      .string()
      .nullable()
      .openapi({ description: "the code's approver now (approve and reject are theirs, or an admin's)" }),
    coshhReference: z.string().nullable().openapi({
      description: 'issue 43: the COSHH assessment reference the request was made under, carried to its sale',
    }),
    restrictedApproval: RestrictedApproval,
    saleId: z.number().int().nullable().openapi({ description: 'the sale fulfilment made (GET /api/sales/{id})' }),
    saleNumber: z.string().nullable().openapi({ example: 'SALE-20261127-7' }),
    shortfall: z
      .array(RequestShortfall)
      .openapi({ description: 'the lines fulfilment handed out less of than requested (empty before fulfilment)' }),
    deliveredTo: z.string().nullable().openapi({ description: 'who collected the goods' }),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
    history: z.array(RequestHistoryEntry).openapi({ description: 'every state the request entered, oldest first' }),
  })
  .openapi('StockRequest');
export type StockRequest = z.infer<typeof StockRequest>;

export const StockRequestPage = z
  .object({
    requests: z.array(StockRequest),
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
    totalPages: z.number().int(),
  })
  .openapi('StockRequestPage');
export type StockRequestPage = z.infer<typeof StockRequestPage>;

export const MySalesQuery = z.object({ page: PageParam, limit: limitParam(20, 100) });
export type MySalesQuery = z.infer<typeof MySalesQuery>;
