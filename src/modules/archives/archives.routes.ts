import type { Deps } from '../../app';
import { ApiRouter } from '../../http/api-router';

export function archivesRoutes({ docs }: Deps) {
  const api = new ApiRouter(docs, '/api', 'Archives');
  return api.router;
}
