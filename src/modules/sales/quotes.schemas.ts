import { z } from 'zod';
import '../../http/openapi';
import { decimalString, IntId } from '../../http/validate';
import { LotNumber } from '../lots/lots.schemas';

/** A quantity: positive, at most 2 decimal places (fractional quantities are allowed). */
export const Quantity = decimalString({ places: 2, max: 1_000_000_000 }).refine((v) => Number(v) > 0, {
  error: 'must be greater than 0',
});

export const LineRequest = z.object({ itemId: IntId, quantity: Quantity });

/** A quote's line: a line, and the lot it sells from when it names one (issue 42). */
export const QuoteLineRequest = LineRequest.extend({
  lotNumber: LotNumber.optional().openapi({
    description:
      'Issue 42, an item tracked by lot: the line sells from this lot only (e.g. a GS1 scan at the counter) instead of first-expiry-first-out. ' +
      'Checked as a sale line naming its lot is: an item not tracked by lot is 400 "<SKU> is not tracked by lot", an unknown lot 404 ' +
      '"Lot <lotNumber> of <SKU> not found", an expired or quarantined one 409 "Lot <lotNumber> of <SKU> is expired" (or quarantined). ' +
      'Two lines may name two lots of one item.',
  }),
});

export const Lines = z
  .array(QuoteLineRequest)
  .min(1, { error: 'must contain at least one item' })
  .max(500, { error: 'must contain at most 500 items' });

const SessionId = z.string().trim().min(1, { error: 'is required' }).max(200);
const ChargeCodeInput = z.string().trim().min(1, { error: 'is required' }).max(64);

export const SaveDraft = z.object({
  chargeCode: ChargeCodeInput,
  items: Lines,
  vatApplied: z.boolean({ error: 'must be a boolean' }).default(true),
  customerNotes: z.string().max(2000).nullable().optional(),
  sessionId: SessionId,
});
export type SaveDraft = z.infer<typeof SaveDraft>;

export const UpdateQuote = z.object({
  chargeCode: ChargeCodeInput.optional(),
  items: Lines.optional(),
  vatApplied: z.boolean({ error: 'must be a boolean' }).optional(),
  customerNotes: z.string().max(2000).nullable().optional(),
});
export type UpdateQuote = z.infer<typeof UpdateQuote>;

export const SessionQuery = z.object({ sessionId: SessionId });
export const ChangeChargeCode = z.object({ chargeCode: ChargeCodeInput, sessionId: SessionId });
export const QuoteIdParams = z.object({ id: IntId });

/** A quote's or a sale's line as the API gives it. */
export const LineBase = z.object({
  id: z.number().int(),
  itemId: z.number().int().nullable(),
  itemName: z.string(),
  itemSku: z.string(),
  quantity: z.string(),
  unitPrice: z.string(),
  vatRate: z.string(),
  vatAmount: z.string(),
  subtotal: z.string(),
  totalWithVat: z.string(),
});

export const QuoteLine = LineBase.extend({
  lotNumber: z.string().nullable().openapi({
    description: 'Issue 42: the lot the line sells from (a GS1 scan, or lotNumber given); null: first-expiry-first-out',
  }),
}).openapi('QuoteLine');
export type QuoteLine = z.infer<typeof QuoteLine>;

export const Quote = z
  .object({
    id: z.number().int(),
    quoteId: z.string(),
    sessionId: z.string(),
    chargeCode: z.string().nullable(),
    subtotalAmount: z.string(),
    vatAmount: z.string(),
    totalAmount: z.string(),
    vatApplied: z.boolean(),
    customerNotes: z.string().nullable(),
    status: z.literal('draft'),
    items: z.array(QuoteLine),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Quote');
export type Quote = z.infer<typeof Quote>;

export const QuoteSaved = z.object({ message: z.string(), quote: Quote }).openapi('QuoteSaved');
export type QuoteSaved = z.infer<typeof QuoteSaved>;

export const QuoteList = z.object({ quotes: z.array(Quote) }).openapi('QuoteList');
export type QuoteList = z.infer<typeof QuoteList>;

export const ChargeCodeChanged = z
  .object({ message: z.string(), chargeCode: z.string() })
  .openapi('DraftChargeCodeChanged');
export type ChargeCodeChanged = z.infer<typeof ChargeCodeChanged>;

/** The counter's forms (urlencoded strings); their quantities and recipient use the API's own schemas. */
export const ScanSku = z.object({
  sku: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(100),
});
export const ItemMatchesQuery = z.object({ sku: z.string().trim().max(100).default('') });
export const BasketLineParams = z.object({ lineId: IntId });
export const LineQuantity = z.object({ quantity: Quantity });
export const BasketDetails = z.object({ customerNotes: z.string().max(2000).default('') });
export const BasketChargeCode = z.object({ chargeCode: z.string().trim().max(64).default('') });
/** GET /counter?sale=<id>: the sale just processed, shown after a post without JavaScript. */
export const CounterQuery = z.object({ sale: IntId.optional() });
