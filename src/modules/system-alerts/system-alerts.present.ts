import type { SystemAlerts } from './system-alerts.schemas';
import type { SystemAlertsReport } from './system-alerts.service';

export function presentSystemAlerts({ alerts, ledgerCheckedAt }: SystemAlertsReport): SystemAlerts {
  return {
    alertCount: alerts.length,
    alerts: alerts.map(({ type, level, message }) => ({ type, level, message })),
    hasSystemAlerts: alerts.length > 0,
    ledgerCheckedAt: ledgerCheckedAt.toISOString(),
  };
}
