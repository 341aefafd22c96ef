import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { presentSystemAlerts } from './system-alerts.present';
import { SystemAlerts } from './system-alerts.schemas';
import { systemAlertsService } from './system-alerts.service';

export function systemAlertsRoutes({ db, docs, reads }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'System');
  const service = systemAlertsService(db, reads.alerts);

  api.get(
    '/system/alerts',
    {
      operationId: 'listSystemAlerts',
      summary: 'System alerts',
      description:
        'Alert types: out_of_stock (critical: active items at or below minimum with no stock), low_stock (warning: active items at or ' +
        "below minimum with some stock), stock_ledger_mismatch (critical: items whose currentStock differs from their last movement's " +
        'newStock, or that have stock but no movement; as found by the last full check of the ledger, at ledgerCheckedAt, less the items put right since), backup_failed (critical: the backup schedule is enabled and its last scheduled ' +
        'backup failed), backup_overdue (critical: the schedule is enabled and no scheduled backup has succeeded for twice its period ' +
        'since it was enabled), sds_missing_or_old (warning: active hazardous items, any pictogram or H statement, without a safety data sheet ' +
        'or whose current one was revised more than the setting safety.sdsReviewYears (unset 5) years ago; listed on the page /reports/sds), ' +
        'outbox_failed (warning: outbox messages, emails or webhook deliveries, that failed in the last day), replica_lagging (warning: a read replica of DATABASE_REPLICA_URLS is unreachable or more than DATABASE_REPLICA_MAX_LAG_MS behind; its reads go to the primary). Any signed-in user may read them (the spec lists only 401 for this endpoint).',
      access: 'auth',
      responses: { 200: { description: 'Alerts', schema: SystemAlerts } },
    },
    async (_req, res) => {
      res.json(presentSystemAlerts(await service.report()));
    },
  );

  api.post(
    '/system/alerts/ledger-check',
    {
      operationId: 'checkStockLedger',
      summary: 'Reconcile the whole stock ledger now',
      description:
        "Runs now the full check the ledger-check job runs every 15 minutes (every item's currentStock against its last " +
        "movement's newStock), stores its result, and answers the system alerts as GET /api/system/alerts then does, " +
        'with ledgerCheckedAt the time of this check: after a correction made outside the service, or a restore.',
      access: 'admin',
      responses: { 200: { description: 'Checked; the alerts', schema: SystemAlerts } },
    },
    async (_req, res) => {
      res.json(presentSystemAlerts(await service.checkNow()));
    },
  );

  return api.router;
}
