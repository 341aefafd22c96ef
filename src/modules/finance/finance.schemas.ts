import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { DateOrTimestamp, QueryBoolean } from '../../http/validate';

const Money = z.string().openapi({ description: 'Decimal amount, 2 places', example: '120.50' });
const Quantity = z.string().openapi({ description: 'Decimal quantity, 2 places', example: '3.00' });
const Paging = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});

export const RechargeQuery = z.object({
  from: DateOrTimestamp.optional().openapi({
    description: 'Sales recorded from (inclusive): a date starts at its UTC midnight',
  }),
  to: DateOrTimestamp.optional().openapi({
    description: 'Sales recorded up to (inclusive): a date covers its whole UTC day',
  }),
  costCentre: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: "Exact cost centre of the sales' charge codes" }),
  chargeCode: z.string().trim().min(1).max(64).optional().openapi({ description: 'Exact charge code' }),
  format: z.enum(['json', 'csv', 'xlsx']).default('json'),
  lines: QueryBoolean.default(false).openapi({ description: 'Add one row per sale line' }),
  page: PageParam.openapi({ description: 'Page of the lines (JSON with lines=true)' }),
  limit: limitParam(100, 1000),
});
export type RechargeQuery = z.infer<typeof RechargeQuery>;
export type RechargeFilter = Pick<RechargeQuery, 'from' | 'to' | 'costCentre' | 'chargeCode'>;

const Figures = {
  sales: z.number().int().openapi({ description: 'Number of sales (a fully refunded sale counts, with zero amounts)' }),
  net: Money,
  vat: Money,
  gross: Money,
  paid: Money.openapi({ description: 'Gross after refunds of the sales marked paid' }),
  unpaid: Money.openapi({ description: 'Gross after refunds of the sales not marked paid' }),
};

export const RechargeGroup = z
  .object({ costCentre: z.string(), chargeCode: z.string(), ...Figures })
  .openapi('RechargeGroup');

export const RechargeLine = z
  .object({
    saleId: z.string().openapi({ example: 'SALE-20261123-41' }),
    date: z.string().openapi({ description: 'When the sale was recorded (ISO 8601 UTC)' }),
    costCentre: z.string(),
    chargeCode: z.string(),
    item: z.string(),
    sku: z.string(),
    quantity: Quantity,
    unitPrice: Money,
    net: Money.openapi({ description: 'As sold' }),
    vat: Money.openapi({ description: 'As sold' }),
    gross: Money.openapi({ description: 'As sold' }),
    refundedQuantity: Quantity,
    netAfterRefunds: Money,
    vatAfterRefunds: Money,
    grossAfterRefunds: Money,
  })
  .openapi('RechargeLine');

export const RechargeReport = z
  .object({
    filter: z.object({
      from: z.string().nullable(),
      to: z.string().nullable(),
      costCentre: z.string().nullable(),
      chargeCode: z.string().nullable(),
    }),
    groups: z.array(RechargeGroup),
    totals: z.object(Figures),
    lines: z
      .array(RechargeLine)
      .optional()
      .openapi({ description: 'With lines=true: one page of the sale lines, oldest sale first' }),
    linesPagination: Paging.optional(),
  })
  .openapi('RechargeReport');

export const CloseBatch = z.object({
  to: DateOrTimestamp.openapi({
    description:
      'End of the batch, exclusive: it takes what was recorded before it. A date means up to the end of that UTC day (2026-11-30 closes through 30 November), ' +
      "or for today's date up to the moment of the close; a timestamp is the instant itself. Must not be in the future (a date after today, or a later instant).",
    example: '2026-11-30',
  }),
});
export type CloseBatch = z.infer<typeof CloseBatch>;

export const BatchParams = z.object({
  batch: z
    .string()
    .trim()
    .regex(/^(\d{1,9}|RC-\d{6}-\d{1,9})$/, { error: 'must be a batch id or number (RC-YYYYMM-n)' })
    .openapi({ description: 'The batch id (1) or its number (RC-202611-1)', example: 'RC-202611-1' }),
});

export const BatchListQuery = z.object({ page: PageParam, limit: limitParam(50, 100) });

const BatchFigures = {
  sales: z.number().int().openapi({ description: 'Sale entries' }),
  refunds: z.number().int().openapi({ description: 'Refund entries (negative adjustments, one per sale)' }),
  net: Money,
  vat: Money,
  gross: Money,
};

export const RechargeBatchSummary = z
  .object({
    id: z.number().int(),
    number: z.string().openapi({ example: 'RC-202611-1' }),
    recordedBefore: z
      .string()
      .openapi({ description: 'Exclusive end: every sale and refund recorded before it and in no earlier batch' }),
    closedAt: z.string(),
    closedBy: z.string().nullable().openapi({ description: 'Email of who closed it' }),
    ...BatchFigures,
  })
  .openapi('RechargeBatchSummary');

export const RechargeBatchList = z
  .object({ batches: z.array(RechargeBatchSummary), pagination: Paging })
  .openapi('RechargeBatchList');

export const RechargeBatch = RechargeBatchSummary.extend({
  costCentres: z.array(
    z.object({
      costCentre: z.string(),
      ...BatchFigures,
      chargeCodes: z.array(z.object({ chargeCode: z.string(), ...BatchFigures })),
    }),
  ),
}).openapi('RechargeBatch');

export const RechargeBatchClosed = z
  .object({ message: z.string(), batch: RechargeBatch })
  .openapi('RechargeBatchClosed');

export const JournalCsv = z.string().openapi({ description: 'CSV text (UTF-8)' });

/** The recharges as a workbook (format=xlsx). */
export const RechargeWorkbook = z.string().openapi({ type: 'string', format: 'binary' });
