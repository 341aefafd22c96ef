import { z } from 'zod';
import { ListedLot, LotsPage, LotTrace, LIST_STATUSES } from '../modules/lot-control/lot-control.schemas';
import { itemRefFields } from './mcp-tools.schemas';

/** The /mcp tools of lots (issue 42): the API's own answer schemas; the inputs as JSON values. */

const LotId = z.number().int().min(1).describe("the lot's id (id in list_lots, or in an item's lots)");

export const ListLotsInput = z
  .object({
    status: z
      .enum(LIST_STATUSES)
      .optional()
      .describe(
        'expiring: within the warning days (setting lots.expiryWarningDays, unset 30) of its expiry; expired: past it; quarantined: held back. Unset: all three',
      ),
    ...itemRefFields,
    page: z.number().int().min(1).default(1).describe('page number, from 1'),
    limit: z.number().int().min(1).max(100).default(50).describe('lots per page (1 to 100, default 50)'),
  })
  .refine((v) => v.itemId === undefined || v.sku === undefined, {
    error: 'give at most one of itemId or sku',
    path: ['itemId'],
  });
export const ListLotsOutput = LotsPage;

export const TraceLotInput = z.object({ lotId: LotId });
export const TraceLotOutput = LotTrace;

export const QuarantineLotInput = z.object({
  lotId: LotId,
  reason: z.string().trim().min(1).max(500).describe('why the lot is held back: shown on the lot'),
});
export const QuarantineLotOutput = z.object({ lot: ListedLot });
