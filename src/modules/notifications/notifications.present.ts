import { quantityNumber } from '../../lib/money';
import type { ClearedNotifications, LowStockNotification, LowStockNotificationList } from './notifications.schemas';
import type { LowStockAlert } from './notifications.service';

export function presentNotification(alert: LowStockAlert): LowStockNotification {
  const current = quantityNumber(alert.currentStock);
  const minimum = quantityNumber(alert.minimumStock);
  const out = current === 0;
  return {
    itemId: alert.id,
    itemName: alert.name,
    sku: alert.sku,
    currentStock: current,
    minimumStock: minimum,
    type: out ? 'out_of_stock' : 'low_stock',
    level: out ? 'critical' : 'warning',
    message: out
      ? `'${alert.name}' is out of stock (minimum ${minimum})`
      : `'${alert.name}' is low on stock: ${current} left, minimum ${minimum}`,
    acknowledged: alert.acknowledgedAt !== null,
    acknowledgedAt: alert.acknowledgedAt ? alert.acknowledgedAt.toISOString() : null,
    acknowledgedBy: alert.acknowledgedBy,
  };
}

export function presentNotificationList(alerts: LowStockAlert[]): LowStockNotificationList {
  const notifications = alerts.map(presentNotification);
  return {
    notifications,
    total: notifications.length,
    unacknowledged: notifications.filter((n) => !n.acknowledged).length,
  };
}

export function presentCleared(cleared: number): ClearedNotifications {
  return { message: `${cleared} acknowledged notification(s) cleared`, cleared };
}
