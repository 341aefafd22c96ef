import { z } from 'zod';
import '../../http/openapi';
import { ItemIds } from '../items/items.schemas';
import { OrderWithItems } from '../orders/orders.schemas';
import { decimalString } from '../../http/validate';

const quantity = (description: string) => z.number().openapi({ description });

export const ReplenishmentItem = z
  .object({
    item: z.object({ id: z.number().int(), name: z.string(), sku: z.string() }),
    currentStock: z.number(),
    minimumStock: z.number(),
    reorderQuantity: z.number().nullable(),
    target: quantity('minimumStock + reorderQuantity, or twice minimumStock when the item has no reorderQuantity'),
    onOrder: quantity(
      'outstanding (ordered - received) on the pending and partly received orders of the item, from any supplier',
    ),
    quantity: quantity(
      'what to order: target - currentStock - onOrder (0 when pending orders already cover it); exact, 2 decimal places',
    ),
  })
  .openapi('ReplenishmentItem');

export const ReplenishmentLine = ReplenishmentItem.extend({
  sourceId: z.number().int(),
  preferred: z
    .boolean()
    .openapi({ description: 'true: the preferred source; false: the cheapest source (the item has no preferred one)' }),
  unitPrice: z.string().openapi({ description: "the source's price, decimal string", example: '4.50' }),
  lineTotal: z.string().openapi({ description: 'quantity x unitPrice, decimal string', example: '31.50' }),
}).openapi('ReplenishmentLine');

export const ReplenishmentSupplier = z
  .object({
    supplier: z.object({ id: z.string(), name: z.string() }),
    lines: z.array(ReplenishmentLine),
    total: z.string().openapi({ description: 'sum of the lines, decimal string' }),
  })
  .openapi('ReplenishmentSupplier');

export const ReplenishmentSuggestions = z
  .object({
    suppliers: z
      .array(ReplenishmentSupplier)
      .openapi({ description: 'items to order, grouped by the supplier of their chosen source (by supplier name)' }),
    withoutSource: z
      .array(ReplenishmentItem)
      .openapi({ description: 'items short of their target with no item source: nothing to order them from' }),
    covered: z.array(ReplenishmentItem).openapi({
      description: 'items at or below their minimum whose shortfall pending orders already cover (quantity 0)',
    }),
  })
  .openapi('ReplenishmentSuggestions');

/** A quantity chosen in place of the suggested one: as an order line's (POST /api/orders). */
const QuantityChoice = z.object({
  itemId: ItemIds.element,
  quantity: decimalString({ places: 2, min: 0.01, max: 999_999_999 }).openapi({ type: 'string', example: '10' }),
});

export const CreateReplenishmentOrders = z
  .object({
    itemIds: ItemIds.optional().openapi({
      description: 'only these items (all must exist); omitted = every suggested item',
    }),
    quantities: z
      .array(QuantityChoice)
      .max(1000)
      .optional()
      .openapi({
        description:
          'order these quantities instead of the suggested ones (the items must exist); an item no longer short of its target ' +
          'beyond what pending orders bring is still not ordered, so a repeat creates nothing',
      }),
  })
  .openapi('CreateReplenishmentOrders');
export type CreateReplenishmentOrders = z.infer<typeof CreateReplenishmentOrders>;

export const ReplenishmentOrdersResult = z
  .object({
    message: z.string(),
    orders: z
      .array(OrderWithItems)
      .openapi({ description: 'the orders created, one per supplier; empty when nothing was short' }),
    withoutSource: z
      .array(ReplenishmentItem)
      .openapi({ description: 'items short of their target that could not be ordered: they have no item source' }),
  })
  .openapi('ReplenishmentOrdersResult');
