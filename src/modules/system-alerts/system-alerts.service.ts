import type { Db } from '../../db/knex';
import { backupScheduleService } from '../backups/backups.schedule';
import { ledgerMismatches, lowStockCounts } from '../items/items.queries';
import { countFailedSince } from '../outbox/outbox.queries';
import type { SystemAlert } from './system-alerts.schemas';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Stock alerts, the ledger reconciliation and the scheduled backups' health. An item is out of
 * line with its ledger when its currentStock differs from its last movement's newStock, or when
 * it has stock but no movement at all (every path that gives an item stock, creation and import
 * included, writes a movement).
 */
export function systemAlertsService(db: Db) {
  return {
    async alerts(): Promise<SystemAlert[]> {
      const [stock, ledger, backups] = await Promise.all([
        lowStockCounts(db),
        ledgerMismatches(db),
        backupScheduleService(db).alerts(new Date()),
      ]);
      const alerts: SystemAlert[] = [];
      const { low, out } = stock;
      if (out > 0) {
        alerts.push({
          type: 'out_of_stock',
          level: 'critical',
          message: `${plural(out, 'item is', 'items are')} out of stock`,
        });
      }
      if (low > 0) {
        alerts.push({
          type: 'low_stock',
          level: 'warning',
          message: `${plural(low, 'item is', 'items are')} at or below minimum stock`,
        });
      }
      const { count, skus } = ledger;
      if (count > 0) {
        alerts.push({
          type: 'stock_ledger_mismatch',
          level: 'critical',
          message: `${plural(count, 'item has a stock level', 'items have stock levels')} that do not match the stock movement ledger (${(skus ?? []).join(', ')}${count > 5 ? ', ...' : ''})`,
        });
      }
      alerts.push(...backups);
      alerts.push(...(await outboxAlerts(db)));
      return alerts;
    },
  };
}

/** Issue 32: the outbox messages (emails, webhook deliveries) that failed for good in the last day. */
async function outboxAlerts(db: Db): Promise<SystemAlert[]> {
  const failed = await countFailedSince(db, new Date(Date.now() - 24 * 60 * 60 * 1000));
  if (failed === 0) return [];
  return [
    {
      type: 'outbox_failed',
      level: 'warning',
      message: `${plural(failed, 'outbox message', 'outbox messages')} failed in the last day`,
    },
  ];
}
