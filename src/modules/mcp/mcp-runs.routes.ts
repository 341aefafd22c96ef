import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';

/** GET /api/mcp/status and the test runs (POST /api/mcp/test, GET /api/mcp/test/{execution_id}). */
export function mcpRunsRoutes({ db, docs, mcpLimiters }: Deps) {
  const api = new ApiRouter({ docs, db, mcpLimiters }, '/api', 'MCP client');
  return api.router;
}
