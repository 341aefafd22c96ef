import type { Db } from '../../db/knex';
import { backupScheduleService } from '../backups/backups.schedule';
import { sql, toRaw } from '../../db/sql';
import { LOW_STOCK_CONDITION } from '../items/items.low-stock';
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
        toRaw<{ rows: { low: number; out: number }[] }>(
          db,
          sql`SELECT count(*) FILTER (WHERE i.current_stock > 0) AS low, count(*) FILTER (WHERE i.current_stock = 0) AS out
                FROM items i WHERE ${LOW_STOCK_CONDITION}`,
        ),
        db.raw<{ rows: { count: number; skus: string[] | null }[] }>(
          `SELECT count(*) AS count, (array_agg(sku ORDER BY id))[1:5] AS skus FROM (
             SELECT i.id, i.sku FROM items i
               LEFT JOIN LATERAL (SELECT m.new_stock FROM stock_movements m WHERE m.item_id = i.id ORDER BY m.id DESC LIMIT 1) last ON true
              WHERE i.current_stock <> coalesce(last.new_stock, 0)) mismatched`,
        ),
        backupScheduleService(db).alerts(new Date()),
      ]);
      const alerts: SystemAlert[] = [];
      const { low, out } = stock.rows[0];
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
      const { count, skus } = ledger.rows[0];
      if (count > 0) {
        alerts.push({
          type: 'stock_ledger_mismatch',
          level: 'critical',
          message: `${plural(count, 'item has a stock level', 'items have stock levels')} that do not match the stock movement ledger (${(skus ?? []).join(', ')}${count > 5 ? ', ...' : ''})`,
        });
      }
      alerts.push(...backups);
      return alerts;
    },
  };
}
