import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { presentSystemAlerts } from './system-alerts.present';
import { SystemAlerts } from './system-alerts.schemas';
import { systemAlertsService } from './system-alerts.service';

export function systemAlertsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'System');
  const service = systemAlertsService(db);

  api.get(
    '/system/alerts',
    {
      operationId: 'listSystemAlerts',
      summary: 'System alerts',
      description:
        'Alert types: out_of_stock (critical: active items at or below minimum with no stock), low_stock (warning: active items at or ' +
        "below minimum with some stock), stock_ledger_mismatch (critical: items whose currentStock differs from their last movement's " +
        'newStock, or that have stock but no movement), backup_failed (critical: the backup schedule is enabled and its last scheduled ' +
        'backup failed), backup_overdue (critical: the schedule is enabled and no scheduled backup has succeeded for twice its period ' +
        'since it was enabled), outbox_failed (warning: outbox messages, emails or webhook deliveries, that failed in the last day). Any signed-in user may read them (the spec lists only 401 for this endpoint).',
      access: 'auth',
      responses: { 200: { description: 'Alerts', schema: SystemAlerts } },
    },
    async (_req, res) => {
      res.json(presentSystemAlerts(await service.alerts()));
    },
  );

  return api.router;
}
