import { z } from 'zod';
import '../../http/openapi';
import { DateOrTimestamp, IntId } from '../../http/validate';
import { UserRef } from '../users/users.schemas';
import { limitParam } from '../../http/pagination';
import { LotShare } from '../lots/lots.schemas';

export const MOVEMENT_TYPES = ['in', 'out', 'adjustment'] as const;

export const StockMovement = z
  .object({
    id: z.number().int(),
    itemId: z.number().int().nullable().openapi({ description: 'null once the item has been permanently deleted' }),
    item: z.object({ id: z.number().int().nullable(), name: z.string(), sku: z.string() }),
    itemName: z.string(),
    itemSku: z.string(),
    type: z.enum(MOVEMENT_TYPES),
    quantity: z
      .number()
      .openapi({ description: 'signed change: +q for in, -q for out, newStock - previousStock for adjustment' }),
    previousStock: z.number(),
    newStock: z.number(),
    reason: z.string(),
    referenceType: z.string().nullable().openapi({ description: "what caused it, e.g. 'sale'" }),
    referenceId: z.string().nullable(),
    performedBy: z.string().nullable().openapi({ description: 'user id' }),
    performer: UserRef.nullable().openapi({ description: 'the same user as an object' }),
    lots: z.array(LotShare).openapi({
      description:
        "Issue 42: the lots the movement moved, earliest expiry first, each quantity signed as the movement's " +
        '(negative for what a sale took); [] for an item not tracked by lot. Turning tracking by lot on or off is an adjustment ' +
        'of 0 whose lots are the stock moved into UNLOTTED (positive) or out of its lot (negative)',
    }),
    createdAt: z.string().datetime(),
  })
  .openapi('StockMovement');
export type StockMovement = z.infer<typeof StockMovement>;

export const MovementList = z.object({ movements: z.array(StockMovement) }).openapi('StockMovementList');
export type MovementList = z.infer<typeof MovementList>;

export const MovementLimit = limitParam(50, 100);

export const MovementQuery = z.object({
  itemId: IntId.optional(),
  type: z.enum(MOVEMENT_TYPES).optional(),
  startDate: DateOrTimestamp.optional().openapi({ description: 'inclusive; a date means from its start (UTC)' }),
  endDate: DateOrTimestamp.optional().openapi({
    description: 'inclusive; a date means up to the end of that day (UTC)',
  }),
  referenceType: z.string().trim().min(1).max(50).optional(),
  referenceId: z.string().trim().min(1).max(100).optional(),
  limit: MovementLimit,
});
export type MovementQuery = z.infer<typeof MovementQuery>;

export const ItemMovementQuery = z.object({ limit: MovementLimit });
