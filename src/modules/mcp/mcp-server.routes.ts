import { Router } from 'express';
import type { Deps } from '../../deps';

/** POST /mcp: the Model Context Protocol server (Streamable HTTP, stateless) for MCP API keys. */
export function mcpServerRoutes(_deps: Deps): Router {
  const routes = Router();
  return routes;
}
