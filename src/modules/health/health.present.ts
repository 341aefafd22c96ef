import { APP_VERSION } from '../../lib/version';
import type { ApiHealth, Liveness } from './health.schemas';
import type { Readiness } from './health.service';

export const presentLiveness = (now = new Date()): Liveness => ({ status: 'healthy', timestamp: now.toISOString() });

export function presentReadiness(readiness: Readiness, now = new Date()): ApiHealth {
  return {
    status: readiness.databaseConnected && !readiness.shuttingDown ? 'healthy' : 'unhealthy',
    database: readiness.databaseConnected ? 'connected' : 'disconnected',
    shuttingDown: readiness.shuttingDown,
    version: APP_VERSION,
    uptime: readiness.uptimeSeconds,
    timestamp: now.toISOString(),
    primary: readiness.primary,
    replicas: readiness.replicas.map((r) => ({ ...r, checkedAt: r.checkedAt?.toISOString() ?? null })),
    poolMode: readiness.poolMode,
  };
}
