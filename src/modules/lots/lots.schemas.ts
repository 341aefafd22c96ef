import { z } from 'zod';
import '../../http/openapi';

export const LOT_STATUSES = ['available', 'expiring', 'expired', 'quarantined', 'empty'] as const;
export const TRACKING_MODES = ['none', 'lot'] as const;

/** A supplier's lot (batch) number, as printed on the bottle. */
export const LotNumber = z
  .string({ error: 'must be a lot number' })
  .trim()
  .min(1, { error: 'is required' })
  .max(80, { error: 'must be at most 80 characters' })
  .openapi({ example: 'B2417' });

/** A calendar date YYYY-MM-DD that exists (2026-02-30 does not). */
export const ExpiryDate = z
  .string({ error: 'must be a date YYYY-MM-DD' })
  .trim()
  .refine((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), {
    error: 'must be a date YYYY-MM-DD',
  })
  .openapi({ example: '2027-06-30' });

export const Lot = z
  .object({
    id: z.number().int(),
    lotNumber: z.string(),
    expiresOn: z.string().nullable().openapi({ description: 'YYYY-MM-DD; null: the lot does not expire' }),
    quantity: z.number(),
    status: z.enum(LOT_STATUSES).openapi({
      description: 'expiring: within the setting lots.expiryWarningDays (unset 30) of its date; expired: past it',
    }),
    receivedAt: z.string().datetime(),
    orderId: z.number().int().nullable().openapi({ description: 'the order it was received on' }),
    supplierId: z.string().nullable(),
    createdAt: z.string().datetime(),
  })
  .openapi('Lot');
export type Lot = z.infer<typeof Lot>;
export const LotList = z.array(Lot);

export const LotsOfItemQuery = z.object({
  includeEmpty: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .openapi({ type: 'boolean', description: 'also the lots that have run out' }),
});

/** A movement's or a sale line's share of a lot. */
export const LotShare = z
  .object({ lotNumber: z.string(), expiresOn: z.string().nullable(), quantity: z.number() })
  .openapi('LotShare');
