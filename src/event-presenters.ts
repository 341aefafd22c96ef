import { registerEventPresenters } from './modules/outbound-webhooks/outbound-webhooks.queries';
import { presentLotRecall } from './modules/lot-control/lot-control.present';
import { presentExpiryChange } from './modules/lots/lots.present';
import { presentOrderDetail } from './modules/orders/orders.present';
import { presentSale } from './modules/sales/sales.present';

/**
 * The webhook events whose `data` is a module's record in its API shape: the sale.* events carry
 * the sale as GET /api/sales/{id} answers it, order.received the order as GET /api/orders/{id}, lot.expiring
 * and lot.expired the lot as GET /api/items/{id}/lots answers it, with its item {id, sku, name}, and
 * lot.recalled the recalled lot as GET /api/lots lists it, with the message and the sales that took it.
 * Registered by the composition root (buildApp), before any route is built and whether or not one
 * is: the publishing services cannot import their presenters (a presenter imports its service's
 * record types, and an import cycle is refused).
 */
export function registerWebhookPresenters(): void {
  registerEventPresenters({
    'sale.created': presentSale,
    'sale.refunded': presentSale,
    'sale.paid': presentSale,
    'order.received': presentOrderDetail,
    'lot.expiring': presentExpiryChange,
    'lot.expired': presentExpiryChange,
    'lot.recalled': presentLotRecall,
  });
}
