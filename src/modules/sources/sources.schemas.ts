import { z } from 'zod';
import '../../http/openapi';
import { IntId, decimalString } from '../../http/validate';

export const LinkItem = z
  .object({
    itemId: IntId,
    price: decimalString({ places: 2, min: 0, max: 9_999_999_999 }).openapi({ type: 'string', example: '4.50' }),
    notes: z.string().trim().max(2000).nullish(),
  })
  .openapi('LinkItem');
export type LinkItem = z.infer<typeof LinkItem>;

export const ItemSource = z
  .object({
    id: z.number().int(),
    supplierId: z.string(),
    itemId: z.number().int(),
    price: z.string().openapi({ description: 'supplier price, decimal string' }),
    notes: z.string().nullable(),
    createdAt: z.string(),
    item: z.object({ id: z.number().int(), name: z.string(), sku: z.string(), isActive: z.boolean() }),
  })
  .openapi('ItemSource');
export type ItemSource = z.infer<typeof ItemSource>;
