import type { Deps } from '../../app';
import { ApiRouter } from '../../http/api-router';

export function backupsRoutes({ docs }: Deps) {
  const api = new ApiRouter(docs, '/api', 'Backups');
  return api.router;
}
