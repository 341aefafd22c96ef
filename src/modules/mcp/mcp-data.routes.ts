import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';

/** GET /api/mcp/sales and GET /api/mcp/inventory: data retrieval for machine clients. */
export function mcpDataRoutes({ db, docs, mcpLimiters }: Deps) {
  const api = new ApiRouter({ docs, db, mcpLimiters }, '/api', 'MCP client');
  return api.router;
}
