import type { Db } from '../../db/knex';
import { allQueries, transaction } from '../../db/transaction';
import { backupScheduleService } from '../backups/backups.schedule';
import { ledgerMismatchedAmong, ledgerMismatchedItems, lowStockCounts } from '../items/items.queries';
import { countFailedSince } from '../outbox/outbox.queries';
import { safetyDataSheetsService } from '../safety-data-sheets/safety-data-sheets.service';
import type { SystemAlert } from './system-alerts.schemas';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** How many of the mismatched items' ids a full check keeps, so a read can see which are fixed since. */
const KEPT_MISMATCHES = 1000;

/** The last full ledger check as stored: when, how many items were out of line, the first of them by id. */
export type LedgerCheck = { checkedAt: Date; mismatchCount: number; mismatchedItemIds: number[] };

type LedgerCheckRow = { checked_at: Date; mismatch_count: number; mismatched_item_ids: number[] };

/**
 * Reconciles the whole stock ledger (every item's currentStock against its last movement's
 * newStock) and stores the result for the alerts: the scheduled job's work (src/jobs/scheduler.ts,
 * under its advisory lock), also run by the MCP system test and by the first alerts read of a
 * database that has never been checked. Each stock change keeps the rule where it is written (the
 * ledger writes the movement and the new level in one transaction); this finds what was changed
 * behind the service's back, such as a manual SQL update of an item's stock.
 */
export async function checkLedger(db: Db): Promise<LedgerCheck> {
  if (db.isTransaction) {
    // a scan of every item: a very large catalogue may need longer than a request's 30 s
    await db.raw(`SET LOCAL statement_timeout = '10min'`);
  }
  const started = performance.now();
  const { count, ids } = await ledgerMismatchedItems(db, KEPT_MISMATCHES);
  const [row] = await db('ledger_checks')
    .insert({
      id: true,
      checked_at: db.fn.now(),
      mismatch_count: count,
      mismatched_item_ids: ids,
      duration_ms: Math.round(performance.now() - started),
    })
    .onConflict('id')
    .merge()
    .returning<LedgerCheckRow[]>(['checked_at', 'mismatch_count', 'mismatched_item_ids']);
  return { checkedAt: row.checked_at, mismatchCount: row.mismatch_count, mismatchedItemIds: row.mismatched_item_ids };
}

/**
 * The ledger's state for the alerts, from the last full check: its count less the items it found
 * that have been put right since (each of its kept ids probed now, so an adjustment that fixes an
 * item clears it at once), and the first five still out of line.
 */
async function ledgerState(db: Db): Promise<{ checkedAt: Date; count: number; skus: string[] }> {
  const row = await db('ledger_checks').first<LedgerCheckRow | undefined>(
    'checked_at',
    'mismatch_count',
    'mismatched_item_ids',
  );
  const check = row
    ? { checkedAt: row.checked_at, mismatchCount: row.mismatch_count, mismatchedItemIds: row.mismatched_item_ids }
    : await checkLedger(db);
  const still = await ledgerMismatchedAmong(db, check.mismatchedItemIds);
  return {
    checkedAt: check.checkedAt,
    count: check.mismatchCount - (check.mismatchedItemIds.length - still.length),
    skus: still.slice(0, 5).map((item) => item.sku),
  };
}

export type SystemAlertsReport = { alerts: SystemAlert[]; ledgerCheckedAt: Date };

/**
 * Stock alerts, the ledger reconciliation and the scheduled backups' health. An item is out of
 * line with its ledger when its currentStock differs from its last movement's newStock, or when
 * it has stock but no movement at all (every path that gives an item stock, creation and import
 * included, writes a movement); that is read from the last full check (checkLedger), with when it ran.
 */
export function systemAlertsService(db: Db, replicaAlerts: () => SystemAlert[] = () => []) {
  async function report(): Promise<SystemAlertsReport> {
    const [stock, ledger, backups, sds] = await allQueries(db, [
      () => lowStockCounts(db),
      () => ledgerState(db),
      () => backupScheduleService(db).alerts(new Date()),
      () => safetyDataSheetsService(db).due(),
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
      const named = [...skus, ...(count > skus.length ? ['...'] : [])].join(', ');
      alerts.push({
        type: 'stock_ledger_mismatch',
        level: 'critical',
        message: `${plural(count, 'item has a stock level', 'items have stock levels')} that do not match the stock movement ledger (${named})`,
      });
    }
    alerts.push(...backups);
    if (sds.rows.length > 0) {
      alerts.push({
        type: 'sds_missing_or_old',
        level: 'warning',
        message: `${plural(sds.rows.length, 'hazardous item has', 'hazardous items have')} no safety data sheet or one older than ${plural(sds.years, 'year', 'years')}`,
      });
    }
    alerts.push(...(await outboxAlerts(db)));
    // issue 44: a read replica down or lagging over DATABASE_REPLICA_MAX_LAG_MS (src/db/replicas.ts)
    alerts.push(...replicaAlerts());
    return { alerts, ledgerCheckedAt: ledger.checkedAt };
  }

  return {
    report,

    /** A full check of the ledger now (an admin's request), then the alerts it leaves. */
    async checkNow(): Promise<SystemAlertsReport> {
      await transaction(db, (trx) => checkLedger(trx));
      return report();
    },

    async alerts(): Promise<SystemAlert[]> {
      return (await report()).alerts;
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
