import { z } from 'zod';
import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody } from '../../http/openapi';
import { IntId, parse } from '../../http/validate';
import { lowStockNotificationsService } from './low-stock.service';

const Notification = z
  .object({
    itemId: z.number().int(),
    itemName: z.string(),
    sku: z.string(),
    currentStock: z.number(),
    minimumStock: z.number(),
    type: z.enum(['out_of_stock', 'low_stock']),
    level: z.enum(['critical', 'warning']),
    message: z.string(),
    acknowledged: z.boolean(),
    acknowledgedAt: z.string().datetime().nullable(),
    acknowledgedBy: z.string().nullable().openapi({ description: 'user id' }),
  })
  .openapi('LowStockNotification');
const NotificationList = z
  .object({ notifications: z.array(Notification), total: z.number().int(), unacknowledged: z.number().int() })
  .openapi('LowStockNotificationList');
const ItemIdParams = z.object({ itemId: IntId });

export function notificationsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Notifications');
  const lowStock = lowStockNotificationsService(db);

  api.get(
    '/notifications/low-stock',
    {
      summary: 'Current low-stock alerts',
      description:
        'One entry per active item at or below its minimum stock (out of stock: level critical, otherwise warning), out of stock first. ' +
        'An item that goes back above its minimum drops off; its acknowledgement ends with that episode, so a later low-stock ' +
        'episode appears unacknowledged again. Acknowledged alerts that were cleared are not listed.',
      access: 'auth',
      responses: { 200: { description: 'Alerts', schema: NotificationList } },
    },
    async (_req, res) => {
      const notifications = await lowStock.list();
      res.json({ notifications, total: notifications.length, unacknowledged: notifications.filter((n) => !n.acknowledged).length });
    },
  );

  api.post(
    '/notifications/low-stock/:itemId/acknowledge',
    {
      summary: "Acknowledge an item's low-stock alert",
      description: 'Answers the acknowledged alert. 400 when the item is not currently low on stock.',
      access: 'manager',
      params: ItemIdParams,
      responses: { 200: { description: 'Acknowledged', schema: Notification }, 400: { description: 'Not low', schema: MessageBody }, 404: { description: 'Item not found', schema: MessageBody } },
    },
    async (req, res) => {
      const { itemId } = parse(ItemIdParams, req.params);
      res.json(await lowStock.acknowledge(itemId, currentUser(req).id));
    },
  );

  api.delete(
    '/notifications/low-stock',
    {
      summary: 'Clear acknowledged low-stock alerts',
      description: 'Hides every acknowledged alert from the list until its item has a new low-stock episode. Answers {message, cleared}.',
      access: 'manager',
      responses: { 200: { description: 'Cleared', schema: z.object({ message: z.string(), cleared: z.number().int() }) } },
    },
    async (_req, res) => {
      const cleared = await lowStock.clearAcknowledged();
      res.json({ message: `${cleared} acknowledged notification(s) cleared`, cleared });
    },
  );

  return api.router;
}
