import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { McpErrorBody } from '../../http/openapi';
import { presentMcpInventoryPage, presentMcpSalesPage } from './mcp-data.present';
import { McpInventoryPage, McpInventoryQuery, McpSalesPage, McpSalesQuery } from './mcp-data.schemas';
import { mcpDataService } from './mcp-data.service';

const mcpError = (description: string) => ({ description, schema: McpErrorBody });
const refusals = {
  400: mcpError('MCP_INVALID_REQUEST: a parameter is refused (the message names it)'),
  401: mcpError('MCP_AUTH_REQUIRED without a key, MCP_AUTH_INVALID for an unknown, revoked or expired key'),
  429: mcpError(
    'MCP_RATE_LIMITED: the data allowance (100 requests a minute per key) is spent; Retry-After says when to retry',
  ),
};

/** GET /api/mcp/sales and GET /api/mcp/inventory: data retrieval for machine clients. */
export function mcpDataRoutes({ db, docs, mcpLimiters }: Deps) {
  const api = new ApiRouter({ docs, db, mcpLimiters }, '/api', 'MCP client');
  const data = mcpDataService(db);

  api.get(
    '/mcp/sales',
    {
      operationId: 'listMcpSales',
      summary: 'Sales for machine clients',
      description:
        'Newest first. Parameters: page (default 1), limit (default 50, max 100), since and until (inclusive; a date YYYY-MM-DD covers its whole UTC day, ' +
        'or an ISO 8601 timestamp; since after until is refused), chargeCode (part of the code, case-insensitive). ' +
        'id is the sale id as a string; total the sale total with VAT as recorded (before refunds), a JSON number; ' +
        'items the number of lines on the sale (not units); timestamp when it was recorded. Spends the data allowance.',
      access: 'mcp-key',
      mcpLimit: 'data',
      query: McpSalesQuery,
      responses: { 200: { description: 'One page of sales', schema: McpSalesPage }, ...refusals },
    },
    async (req, res) => {
      const { page, limit, ...period } = req.input.query;
      res.json(presentMcpSalesPage(await data.salesPage(period, { page, limit }), { page, limit }));
    },
  );

  api.get(
    '/mcp/inventory',
    {
      operationId: 'listMcpInventory',
      summary: 'Active items for machine clients',
      description:
        'By name. Parameters: page (default 1), limit (default 50, max 100), search (part of the name, description or SKU, case-insensitive), ' +
        'category (a category name, exact but case-insensitive; an unknown name matches nothing), lowStock (true: only items at or below their ' +
        'minimum stock; false: only items above it). id is the item id as a string; stock and price (before VAT) are JSON numbers; ' +
        'categories lists every category name. Spends the data allowance.',
      access: 'mcp-key',
      mcpLimit: 'data',
      query: McpInventoryQuery,
      responses: { 200: { description: 'One page of items', schema: McpInventoryPage }, ...refusals },
    },
    async (req, res) => {
      const { page, limit, ...filter } = req.input.query;
      const [items, categories] = await Promise.all([data.inventory(filter, { page, limit }), data.categoryNames()]);
      res.json(presentMcpInventoryPage(items, categories, { page, limit }));
    },
  );

  return api.router;
}
