import type { Deps } from '../../app';
import { ApiRouter } from '../../http/api-router';

/** GET/DELETE /api/notifications/deployments (behind the session and bearer middleware). */
export function deploymentNotificationsRoutes({ docs }: Deps) {
  const api = new ApiRouter(docs, '/api', 'Deployments');
  return api.router;
}
