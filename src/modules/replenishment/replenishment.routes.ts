import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { actorOf } from '../audit/audit.actor';
import { presentReplenishmentOrders, presentSuggestions } from './replenishment.present';
import {
  CreateReplenishmentOrders,
  ReplenishmentOrdersResult,
  ReplenishmentSuggestions,
} from './replenishment.schemas';
import { replenishmentService } from './replenishment.service';

const RULES =
  'An item is suggested when it is active and at or below its minimum stock (the low-stock rule). Its target is ' +
  'minimumStock + reorderQuantity, or twice minimumStock without one; what to order is target - currentStock - onOrder, ' +
  'where onOrder is ordered - received on its pending and partly received orders (any supplier), exact to 2 decimal places. ' +
  'An item with a zero minimum and no reorderQuantity has a target of 0 and is never short. The source is the preferred one, ' +
  'else the cheapest (ties: the oldest link).';

/** /api/replenishment: what to reorder, and pending orders made from it (managers and admins, as inventory). */
export function replenishmentRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Replenishment');
  const replenishment = replenishmentService(db);

  api.get(
    '/replenishment',
    {
      operationId: 'getReplenishmentSuggestions',
      summary: 'What to reorder, by supplier',
      description: `${RULES} Items short with no source are listed apart (withoutSource), and items at or below their minimum whose shortfall is already on order under covered.`,
      access: 'manager',
      responses: { 200: { description: 'The suggestions', schema: ReplenishmentSuggestions } },
    },
    async (_req, res) => {
      res.json(presentSuggestions(await replenishment.suggestions()));
    },
  );

  api.post(
    '/replenishment/orders',
    {
      operationId: 'createReplenishmentOrders',
      summary: 'Create pending orders from the suggestions',
      description:
        `${RULES} One transaction: one pending order per supplier, a line per item at the source's price, and a note on each ` +
        'order saying it came from replenishment. Runs one at a time (a PostgreSQL advisory lock), and because the suggestions ' +
        'are net of what pending orders bring, asking again (or at the same time) while those orders are pending creates nothing ' +
        'for the same shortfall: 200 with orders []. itemIds limits the run to those items; quantities orders the given quantity of an item ' +
        'in place of the suggested one.',
      access: 'manager',
      body: CreateReplenishmentOrders,
      omittedBodyIsEmpty: true,
      responses: {
        201: { description: 'Orders created', schema: ReplenishmentOrdersResult },
        200: { description: 'Nothing was short: no order created (orders [])', schema: ReplenishmentOrdersResult },
        400: {
          description: 'Validation failed, or itemIds naming items that do not exist',
          schema: ValidationErrorBody,
        },
        403: { description: 'Not a manager or admin', schema: MessageBody },
      },
    },
    async (req, res) => {
      const outcome = await replenishment.createOrders(req.input.body, actorOf(req));
      res.status(outcome.orders.length > 0 ? 201 : 200).json(presentReplenishmentOrders(outcome));
    },
  );

  return api.router;
}
