import { Router, type RequestHandler } from 'express';
import type { Deps } from '../../deps';
import { currentMcpKey, requireMcpKey } from '../../auth/guards';
import { HttpError } from '../../http/errors';

/** The MCP SDK and the tools load on the first POST /mcp: kept out of start-up, they leave some 8 MB out of an idle server. */
let mcpModules: Promise<[typeof import('./mcp-tools'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]> | undefined;
const loadMcp = () => (mcpModules ??= Promise.all([import('./mcp-tools'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]));

/** The transport is stateless: no session to resume (GET) or end (DELETE). */
const postOnly: RequestHandler = (req, _res, next) => {
  next(new HttpError(405, `${req.method} /mcp is not supported: this MCP server is stateless, send each JSON-RPC message with POST`, undefined, { Allow: 'POST' }));
};

/**
 * POST /mcp: the Model Context Protocol server (Streamable HTTP, stateless) for MCP API keys. Each
 * request gets its own server and transport, closed when the response is; so any instance can
 * answer any request. Every POST spends the key's data allowance.
 */
export function mcpServerRoutes(deps: Deps): Router {
  const routes = Router();

  routes.post('/mcp', requireMcpKey, deps.mcpLimiters.data, async (req, res) => {
    const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await loadMcp();
    const server = createMcpServer(deps, currentMcpKey(req));
    // JSON answers rather than an event stream: the tools send no progress, and a plain client reads JSON
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  routes.get('/mcp', postOnly);
  routes.delete('/mcp', postOnly);
  return routes;
}
