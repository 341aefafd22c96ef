import { z } from 'zod';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import '../../http/openapi';
import { systemAlertsService } from './system-alerts.service';

const SystemAlerts = z
  .object({
    alertCount: z.number().int(),
    alerts: z.array(z.object({ type: z.string(), level: z.enum(['warning', 'critical']), message: z.string() })),
    hasSystemAlerts: z.boolean(),
  })
  .openapi('SystemAlerts');

export function systemAlertsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'System');
  const service = systemAlertsService(db);

  api.get(
    '/system/alerts',
    {
      summary: 'System alerts',
      description:
        'Alert types: out_of_stock (critical: active items at or below minimum with no stock), low_stock (warning: active items at or ' +
        'below minimum with some stock), stock_ledger_mismatch (critical: items whose currentStock differs from their last movement\'s ' +
        'newStock, or that have stock but no movement), backup_failed (critical: the backup schedule is enabled and its last scheduled ' +
        'backup failed), backup_overdue (critical: the schedule is enabled and no scheduled backup has succeeded for twice its period ' +
        'since it was enabled). Any signed-in user may read them (the spec lists only 401 for this endpoint).',
      access: 'auth',
      responses: { 200: { description: 'Alerts', schema: SystemAlerts } },
    },
    async (_req, res) => {
      const alerts = await service.alerts();
      res.json({ alertCount: alerts.length, alerts, hasSystemAlerts: alerts.length > 0 });
    },
  );

  return api.router;
}
