import { z } from 'zod';
import '../../http/openapi';
import { limitParam, PageParam } from '../../http/pagination';
import { IntId } from '../../http/validate';
import { Lot } from '../lots/lots.schemas';

/*
 * Issue 42, expiry on the floor, quarantine and recall: the lots list, a lot's write-off,
 * quarantine, release, trace and recall.
 */

export const LIST_STATUSES = ['expiring', 'expired', 'quarantined'] as const;

export const LotsQuery = z.object({
  status: z
    .enum(LIST_STATUSES, { error: `must be one of ${LIST_STATUSES.join(', ')}` })
    .optional()
    .openapi({ description: 'unset: expiring, expired and quarantined lots' }),
  itemId: IntId.optional(),
  page: PageParam,
  limit: limitParam(50, 100),
});
export type LotsQuery = z.infer<typeof LotsQuery>;

export const LotItem = z.object({ id: z.number().int(), sku: z.string(), name: z.string() }).openapi('LotItem');
export type LotItem = z.infer<typeof LotItem>;

/** A lot with its item, and why it is quarantined. */
export const ListedLot = Lot.extend({
  quarantinedAt: z.string().datetime().nullable(),
  quarantineReason: z.string().nullable(),
  item: LotItem,
}).openapi('ListedLot');
export type ListedLot = z.infer<typeof ListedLot>;

export const LotsPage = z
  .object({
    lots: z.array(ListedLot),
    pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  })
  .openapi('LotsPage');
export type LotsPage = z.infer<typeof LotsPage>;

export const LotIdParams = z.object({ id: IntId });

const Reason = z
  .string({ error: 'must be text' })
  .trim()
  .min(1, { error: 'is required' })
  .max(500, { error: 'must be at most 500 characters' });

export const WriteOffBody = z.object({
  reason: Reason.optional().openapi({ description: 'the movement\'s reason; unset: "Expired lot <lotNumber>"' }),
});
export type WriteOffBody = z.infer<typeof WriteOffBody>;

export const QuarantineBody = z.object({ reason: Reason });
export type QuarantineBody = z.infer<typeof QuarantineBody>;

export const RecallBody = z.object({
  message: z
    .string({ error: 'must be text' })
    .trim()
    .min(1, { error: 'is required' })
    .max(2000, { error: 'must be at most 2000 characters' })
    .openapi({ description: 'what the people who got the lot should do; it is in every email' }),
});
export type RecallBody = z.infer<typeof RecallBody>;

export const RecallResult = z
  .object({
    quarantined: z.literal(true),
    notified: z.number().int().openapi({ description: 'how many addresses were emailed (one email each)' }),
  })
  .openapi('RecallResult');
export type RecallResult = z.infer<typeof RecallResult>;

export const TraceQuery = z.object({
  format: z
    .enum(['json', 'csv'])
    .default('json')
    .openapi({ description: 'csv: the sales that took the lot, a row each, as a download' }),
});

export const LotTrace = z
  .object({
    lot: ListedLot,
    item: LotItem,
    received: z.array(
      z.object({
        orderId: z.number().int().nullable().openapi({ description: "the order's numeric id (null: deleted)" }),
        orderNumber: z.string(),
        supplier: z.string().nullable().openapi({ description: "the supplier's name" }),
        quantity: z.number(),
        receivedAt: z.string().datetime(),
      }),
    ),
    sales: z.array(
      z.object({
        saleId: z.number().int().nullable().openapi({ description: "the sale's numeric id (null: archived)" }),
        saleNumber: z.string(),
        chargeCode: z.string().nullable(),
        deliveredTo: z.string().nullable(),
        deliveredToEmail: z.string().nullable(),
        quantity: z.number().openapi({ description: 'what the sale took of the lot, net of refunds' }),
        soldAt: z.string().datetime(),
      }),
    ),
    movements: z.array(
      z.object({
        id: z.number().int(),
        type: z.enum(['in', 'out', 'adjustment']),
        quantity: z.number().openapi({ description: "the movement's change to this lot, signed (negative: taken)" }),
        reason: z.string(),
        referenceType: z.string().nullable(),
        referenceId: z.string().nullable(),
        performedBy: z.string().nullable(),
        createdAt: z.string().datetime(),
      }),
    ),
    remaining: z.number().openapi({ description: 'what the lot holds now' }),
  })
  .openapi('LotTrace');
export type LotTrace = z.infer<typeof LotTrace>;
