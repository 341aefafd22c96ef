import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody } from '../../http/openapi';
import { presentCleared, presentNotification, presentNotificationList } from './notifications.present';
import {
  ClearedNotifications,
  ItemIdParams,
  LowStockNotification,
  LowStockNotificationList,
} from './notifications.schemas';
import { lowStockNotificationsService } from './notifications.service';

export function notificationsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Notifications');
  const lowStock = lowStockNotificationsService(db);

  api.get(
    '/notifications/low-stock',
    {
      operationId: 'listLowStockNotifications',
      summary: 'Current low-stock alerts',
      description:
        'One entry per active item at or below its minimum stock (out of stock: level critical, otherwise warning), out of stock first. ' +
        'An item that goes back above its minimum drops off; its acknowledgement ends with that episode, so a later low-stock ' +
        'episode appears unacknowledged again. Acknowledged alerts that were cleared are not listed.',
      access: 'auth',
      responses: { 200: { description: 'Alerts', schema: LowStockNotificationList } },
    },
    async (_req, res) => {
      res.json(presentNotificationList(await lowStock.list()));
    },
  );

  api.post(
    '/notifications/low-stock/:itemId/acknowledge',
    {
      operationId: 'acknowledgeLowStock',
      summary: "Acknowledge an item's low-stock alert",
      description: 'Answers the acknowledged alert. 400 when the item is not currently low on stock.',
      access: 'manager',
      params: ItemIdParams,
      responses: {
        200: { description: 'Acknowledged', schema: LowStockNotification },
        400: { description: 'Not low', schema: MessageBody },
        404: { description: 'Item not found', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { itemId } = req.input.params;
      res.json(presentNotification(await lowStock.acknowledge(itemId, currentUser(req).id)));
    },
  );

  api.delete(
    '/notifications/low-stock',
    {
      operationId: 'clearAcknowledgedLowStock',
      summary: 'Clear acknowledged low-stock alerts',
      description:
        'Hides every acknowledged alert from the list until its item has a new low-stock episode. Answers {message, cleared}.',
      access: 'manager',
      responses: { 200: { description: 'Cleared', schema: ClearedNotifications } },
    },
    async (_req, res) => {
      res.json(presentCleared(await lowStock.clearAcknowledged()));
    },
  );

  return api.router;
}
