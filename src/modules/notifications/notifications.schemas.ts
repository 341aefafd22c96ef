import { z } from 'zod';
import '../../http/openapi';
import { IntId } from '../../http/validate';

export const LowStockNotification = z
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
export type LowStockNotification = z.infer<typeof LowStockNotification>;

export const LowStockNotificationList = z
  .object({ notifications: z.array(LowStockNotification), total: z.number().int(), unacknowledged: z.number().int() })
  .openapi('LowStockNotificationList');
export type LowStockNotificationList = z.infer<typeof LowStockNotificationList>;

export const ClearedNotifications = z.object({ message: z.string(), cleared: z.number().int() });
export type ClearedNotifications = z.infer<typeof ClearedNotifications>;

export const ItemIdParams = z.object({ itemId: IntId });
