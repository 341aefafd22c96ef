import { z } from 'zod';
import '../../http/openapi';
import { DateOrTimestamp, IntId, QueryBoolean } from '../../http/validate';
import { UserRef } from '../users/users.schemas';
import { LineBase, LineRequest, Quantity } from './quotes.schemas';
import { LotNumber, LotShare } from '../lots/lots.schemas';
import { limitParam, PageParam } from '../../http/pagination';

export const SalesFilter = z.object({
  chargeCode: z.string().trim().max(64).optional(),
  startDate: DateOrTimestamp.optional(),
  endDate: DateOrTimestamp.optional(),
  unpaidOnly: QueryBoolean.optional(),
  search: z.string().trim().max(200).optional().openapi({
    description:
      "Finds sales by sale number (exact or its start), part of the recipient's name or email, part of the COSHH assessment reference, or part of the SKU or name of any line; case-insensitive",
    example: 'SALE-20261126-18',
  }),
});
export type SalesFilter = z.infer<typeof SalesFilter>;

export const SalesQuery = SalesFilter.extend({ page: PageParam, limit: limitParam(50, 100) });
export const ReportQuery = SalesQuery.extend({ format: z.enum(['json', 'csv']).default('json') });

export const RecipientBody = z.object({
  deliveredTo: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(200),
  deliveredToEmail: z.string().trim().email({ error: 'must be an email address' }).nullable().optional(),
});
export type RecipientBody = z.infer<typeof RecipientBody>;

const EmailReceipt = z.boolean({ error: 'must be a boolean' }).optional();
const EMAIL_RECEIPT =
  "Email a receipt (the lines, totals, charge code and sale number) to deliveredToEmail once the change commits (the counter's " +
  '"Email a receipt" tick box; default false). True without deliveredToEmail, or with one outside the domains of the setting ' +
  "email.recipientDomains (unset: the active users' domains), is a 400 naming it; past email.receiptsPerHour receipts an hour (20 unset) a 429.";

/** PATCH /api/sales/{id}/recipient: the recipient, and whether to email them the receipt. */
export const SetRecipientBody = RecipientBody.extend({
  emailReceipt: EmailReceipt.openapi({ description: EMAIL_RECEIPT }),
});
export type SetRecipientBody = z.infer<typeof SetRecipientBody>;

/** Issue 43: the reference of the COSHH assessment a sale (or request) is made under: 1 to 100 characters, trimmed. */
export const CoshhReference = z
  .string({ error: 'must be text' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(100, { error: 'must be at most 100 characters' });

const COSHH_REFERENCE =
  "Issue 43: the COSHH assessment reference (1 to 100 characters), required when any line's item (or its category) has coshhRequired: " +
  'without it 400 "A COSHH assessment reference is required for <SKU>" naming the first such line, checked after the charge code and before stock. ' +
  'Recorded on the sale, shown on its receipt and page, found by Search sales';

/** What a sale brings for the charge-code policies of the settings (off by default). */
export const SaleAuthorisationBody = z.object({
  coshhReference: CoshhReference.optional().openapi({ description: COSHH_REFERENCE }),
  pin: z.string().min(1, { error: 'must not be empty' }).max(128).optional().openapi({
    description:
      "The charge code's PIN: needed when the setting chargeCodes.requirePin is on and the code has one, ignored otherwise; never stored",
  }),
  recipient: RecipientBody.optional().openapi({
    description:
      'Who receives the goods, recorded on the sale as PATCH /api/sales/{id}/recipient would. ' +
      "With the setting chargeCodes.requireAuthorisedUser on, deliveredToEmail is needed and must be one of the code's authorised users",
  }),
  emailReceipt: z
    .boolean({ error: 'must be a boolean' })
    .optional()
    .openapi({
      description:
        "Email a receipt (the lines, totals, charge code and sale number) to recipient.deliveredToEmail once the sale commits (the counter's " +
        '"Email a receipt" tick box; default false). True without recipient.deliveredToEmail is a 400 naming it.',
    }),
});
export type SaleAuthorisationBody = z.infer<typeof SaleAuthorisationBody>;

/** A line of a direct sale: a quote's line, and the lot it takes when it names one (issue 42). */
export const SaleLineRequest = LineRequest.extend({
  lotNumber: LotNumber.optional().openapi({
    description:
      'Issue 42, an item tracked by lot: take this lot only (e.g. from a GS1 scan at the counter) instead of first-expiry-first-out. ' +
      'An unknown lot is 404, an expired or quarantined one 409 "Lot <lotNumber> of <SKU> is expired" (or quarantined), ' +
      "a lot holding less than the line the spec's 400 with Current stock what the lot holds; an untracked item 400",
  }),
});

export const CreateSale = SaleAuthorisationBody.extend({
  chargeCode: z.string().trim().min(1, { error: 'is required' }).max(64),
  items: z
    .array(SaleLineRequest)
    .min(1, { error: 'must contain at least one item' })
    .max(500, { error: 'must contain at most 500 items' }),
  vatApplied: z.boolean({ error: 'must be a boolean' }).default(true),
  customerNotes: z.string().max(2000).nullable().optional(),
});
export type CreateSale = z.infer<typeof CreateSale>;

/** The Idempotency-Key request header of POST /api/sales: 1 to 200 printable ASCII characters (space to ~). */
export const IdempotencyKeyHeader = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x20-\x7E]{1,200}$/, { error: 'must be 1 to 200 printable characters' })
    .optional(),
});

export const SaleIdParams = z.object({ id: IntId });

export const RefundBody = z.object({
  items: z.array(z.object({ itemId: IntId, refundQty: Quantity })).min(1, { error: 'must contain at least one item' }),
  note: z.string().trim().max(2000).optional(),
});
export type RefundBody = z.infer<typeof RefundBody>;

export const StockCheckBody = z.object({
  items: z.array(z.object({ itemId: IntId, quantity: Quantity })).min(1, { error: 'must contain at least one item' }),
});

export const PeriodQuery = z.object({
  limit: limitParam(10, 100),
  period: z.enum(['week', 'month', 'year']).optional(),
});

export const SaleLine = LineBase.extend({
  refundedQuantity: z.string(),
  lots: z.array(LotShare).openapi({
    description:
      'Issue 42: the lots the line took (quantities positive), earliest expiry first; [] for an item not tracked by lot. ' +
      'Two lines of one item take in line order, each from its named lot or first-expiry-first-out from what the lines before it left',
  }),
}).openapi('SaleLine');

export const Sale = z
  .object({
    id: z.number().int(),
    saleId: z.string(),
    quoteId: z.string().nullable(),
    chargeCode: z.string(),
    subtotalAmount: z.string(),
    vatAmount: z.string(),
    totalAmount: z.string(),
    refundedAmount: z.string(),
    vatApplied: z.boolean(),
    customerNotes: z.string().nullable(),
    coshhReference: z
      .string()
      .nullable()
      .openapi({ description: 'issue 43: the COSHH assessment reference the sale was made under; null when none' }),
    status: z.enum(['completed', 'paid', 'partially_refunded', 'refunded']),
    isPaid: z.boolean(),
    processedBy: UserRef.nullable(),
    deliveredTo: z.string().nullable(),
    deliveredToEmail: z.string().nullable(),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    items: z.array(SaleLine),
  })
  .openapi('Sale');
export type Sale = z.infer<typeof Sale>;

export const Pagination = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

export const SalesPage = z.object({ sales: z.array(Sale), pagination: Pagination }).openapi('SalesPage');
export type SalesPage = z.infer<typeof SalesPage>;

export const SaleCreated = z.object({ message: z.string(), sale: Sale }).openapi('SaleCreated');
export type SaleCreated = z.infer<typeof SaleCreated>;

export const SaleProcessed = z.object({ message: z.string(), sale: Sale }).openapi('SaleProcessed');
export type SaleProcessed = z.infer<typeof SaleProcessed>;

export const SalePaymentState = z.object({
  id: z.number().int(),
  saleId: z.string(),
  isPaid: z.boolean(),
  status: z.string(),
  updatedAt: z.string(),
});
export type SalePaymentState = z.infer<typeof SalePaymentState>;

/** Both documented forms at once: the flat fields and {message, sale}. */
export const SalePaid = SalePaymentState.extend({ message: z.string(), sale: SalePaymentState }).openapi('SalePaid');
export type SalePaid = z.infer<typeof SalePaid>;

export const SaleUnpaid = z.object({ message: z.string(), sale: SalePaymentState }).openapi('SaleUnpaid');
export type SaleUnpaid = z.infer<typeof SaleUnpaid>;

export const SaleRecipient = z
  .object({
    message: z.string(),
    sale: z.object({
      id: z.number(),
      saleId: z.string(),
      deliveredTo: z.string(),
      deliveredToEmail: z.string().nullable(),
      deliveredAt: z.string(),
    }),
  })
  .openapi('SaleRecipient');
export type SaleRecipient = z.infer<typeof SaleRecipient>;

export const SaleRefund = z
  .object({
    message: z.string(),
    sale: z.object({
      id: z.number(),
      saleId: z.string(),
      totalAmount: z.string(),
      refundedAmount: z.string(),
      status: z.string(),
    }),
    refundedItems: z.array(
      z.object({ itemId: z.number(), itemName: z.string(), refundedQty: z.number(), stockRestored: z.boolean() }),
    ),
  })
  .openapi('SaleRefund');
export type SaleRefund = z.infer<typeof SaleRefund>;

export const ItemStat = z.object({
  itemId: z.number().int().nullable(),
  itemName: z.string(),
  itemSku: z.string(),
  totalQuantity: z.number(),
  totalRevenue: z.number(),
  salesCount: z.number().int(),
});
export type ItemStat = z.infer<typeof ItemStat>;

export const MostSoldItems = z.object({ items: z.array(ItemStat) }).openapi('MostSoldItems');
export type MostSoldItems = z.infer<typeof MostSoldItems>;

export const StockCheckResult = z
  .object({
    allAvailable: z.boolean(),
    items: z.array(
      z.object({
        itemId: z.number(),
        itemName: z.string().nullable(),
        available: z.boolean(),
        currentStock: z.number(),
        requested: z.number(),
      }),
    ),
  })
  .openapi('StockCheckResult');
export type StockCheckResult = z.infer<typeof StockCheckResult>;

export const SalesLowStockReport = z
  .object({
    items: z.array(
      z.object({
        id: z.number().int(),
        name: z.string(),
        sku: z.string(),
        price: z.string(),
        currentStock: z.number(),
        minimumStock: z.number(),
        shortfall: z.number(),
        category: z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable() }).nullable(),
      }),
    ),
    total: z.number().int(),
    generatedAt: z.string(),
  })
  .openapi('SalesLowStockReport');
export type SalesLowStockReport = z.infer<typeof SalesLowStockReport>;

export const ReportSale = z.object({
  id: z.number().int(),
  saleId: z.string(),
  chargeCode: z.string(),
  department: z.string().nullable(),
  subtotalAmount: z.string(),
  vatAmount: z.string(),
  totalAmount: z.string(),
  total: z.number(),
  refundedAmount: z.string(),
  status: z.string(),
  isPaid: z.boolean(),
  customerNotes: z.string().nullable(),
  deliveredTo: z.string().nullable(),
  deliveredToEmail: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
  processedBy: z.object({ firstName: z.string(), lastName: z.string() }),
  items: z.array(z.object({ itemName: z.string(), itemSku: z.string(), quantity: z.string(), unitPrice: z.string() })),
});

export const SalesReport = z
  .object({
    success: z.boolean(),
    data: z.object({
      summary: z.object({ totalSales: z.number().int(), totalAmount: z.number(), uniqueChargeCodes: z.number().int() }),
      departmentSummary: z.array(
        z.object({ department: z.string(), totalSales: z.number().int(), totalAmount: z.number() }),
      ),
      sales: z.array(ReportSale),
      pagination: Pagination,
    }),
  })
  .openapi('SalesReport');
export type SalesReport = z.infer<typeof SalesReport>;
