import type { Deps } from '../../app';
import { ApiRouter } from '../../http/api-router';

/**
 * POST /api/webhook/*: mounted before the JSON parser, the bearer-token and session middleware,
 * so the signature is checked over the raw body bytes and the webhook secret is never taken
 * for a user's API token.
 */
export function webhookRoutes({ docs }: Deps) {
  const api = new ApiRouter(docs, '/api', 'Webhooks');
  return api.router;
}
