import type { SystemAlert, SystemAlerts } from './system-alerts.schemas';

export function presentSystemAlerts(alerts: SystemAlert[]): SystemAlerts {
  return {
    alertCount: alerts.length,
    alerts: alerts.map(({ type, level, message }) => ({ type, level, message })),
    hasSystemAlerts: alerts.length > 0,
  };
}
