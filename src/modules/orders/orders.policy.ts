import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';
import { D } from '../../lib/money';
import type { OrderStatus } from './orders.schemas';

/** Who places and changes orders (create, import, receive, cancel, attach an invoice, add to inventory): the API's access of those routes. */
export const ORDER_MANAGERS = 'manager' satisfies Role;

/** Whether this person may change orders: what the API's guard of those routes asks, and the page's buttons. */
export const mayManageOrders = (user: Express.User): boolean => hasRole(user, ORDER_MANAGERS);

/** An order takes receipts while pending or partly received: the receiving service's check and the page's receive form. */
export const isReceivable = (status: OrderStatus): boolean => status === 'pending' || status === 'partially_received';

/** An order may be cancelled while it is pending and nothing on it is received: the service's check and the page's button. */
export const isCancellable = (status: OrderStatus, receivedQuantities: readonly (string | number)[]): boolean =>
  status === 'pending' && receivedQuantities.every((quantity) => new D(quantity).lte(0));
