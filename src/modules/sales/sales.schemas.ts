import { z } from 'zod';
import '../../http/openapi';
import { DateOrTimestamp, IntId, QueryBoolean } from '../../http/validate';
import { UserRef } from '../users/users.schemas';
import { Lines, Quantity, QuoteLine } from './quotes.schemas';
import { limitParam, PageParam } from '../../http/pagination';



export const SalesFilter = z.object({
  chargeCode: z.string().trim().max(64).optional(),
  startDate: DateOrTimestamp.optional(),
  endDate: DateOrTimestamp.optional(),
  unpaidOnly: QueryBoolean.optional(),
});
export type SalesFilter = z.infer<typeof SalesFilter>;

export const SalesQuery = SalesFilter.extend({ page: PageParam, limit: limitParam(50, 100) });
export const ReportQuery = SalesQuery.extend({ format: z.enum(['json', 'csv']).default('json') });

export const CreateSale = z.object({
  chargeCode: z.string().trim().min(1, { error: 'is required' }).max(64),
  items: Lines,
  vatApplied: z.boolean({ error: 'must be a boolean' }).default(true),
  customerNotes: z.string().max(2000).nullable().optional(),
});
export type CreateSale = z.infer<typeof CreateSale>;

export const SaleIdParams = z.object({ id: IntId });

export const RecipientBody = z.object({
  deliveredTo: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(200),
  deliveredToEmail: z.string().trim().email({ error: 'must be an email address' }).nullable().optional(),
});

export const RefundBody = z.object({
  items: z.array(z.object({ itemId: IntId, refundQty: Quantity })).min(1, { error: 'must contain at least one item' }),
  note: z.string().trim().max(2000).optional(),
});
export type RefundBody = z.infer<typeof RefundBody>;

export const StockCheckBody = z.object({ items: z.array(z.object({ itemId: IntId, quantity: Quantity })).min(1, { error: 'must contain at least one item' }) });

export const PeriodQuery = z.object({
  limit: limitParam(10, 100),
  period: z.enum(['week', 'month', 'year']).optional(),
});

export const SaleLine = QuoteLine.extend({ refundedQuantity: z.string() }).openapi('SaleLine');

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

export const Pagination = z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int() });
