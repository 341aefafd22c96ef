import { McpServer, type ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ZodError, type z } from 'zod';
import type { Deps } from '../deps';
import { HttpError } from '../http/errors';
import { mcpErrorBody } from '../http/mcp-errors';
import { validationErrors } from '../http/validate';
import { APP_VERSION } from '../lib/version';
import type { Actor } from '../modules/audit/audit.actor';
import { portableJsonSchema } from './mcp-json-schema';
import type { McpKeyHolder } from '../modules/mcp-keys/mcp-keys.service';
import type { AddTool, ToolContext } from './mcp-tool-spec';
import { registerPrompts, registerResources } from './mcp-resources';
import { registerCounterTools } from './mcp-tools.counter';
import { registerHazardTools } from './mcp-tools.hazards';
import { registerLotTools } from './mcp-tools.lots';
import { registerPurchasingTools } from './mcp-tools.purchasing';
import { registerReadTools } from './mcp-tools.read';
import { registerWriteTools } from './mcp-tools.write';

const INSTRUCTIONS =
  'The university stores counter: inventory (items, stock, low stock, stock movements), sales figures and charge codes (budget codes). ' +
  'Lists are paged (at most 100 rows a call). Money is in GBP; amounts before VAT unless stated. ' +
  'Purchasing: suppliers and their item sources, purchase orders, replenishment suggestions; the counter: finding sales, notes on records; ' +
  "lots: expiring, expired and quarantined lots, who got a lot (a manager's key); hazards: an item's hazards and safety data sheets, the hazard register and the items without a current SDS (a manager's key). " +
  'Keys with the write scope can also record stock changes, create draft quotes, suppliers, item sources and purchase orders, receive ' +
  "orders, order what replenishment suggests, add notes, refund sales (with the refund permission) and quarantine lots (a manager's key), acting as the admin who created the key. " +
  'Resources: stores://items/{sku} (an item) and stores://sales/{saleId} (a sale by number or id); prompts: reorder_this_week, explain_charge_code_spending.';

/**
 * The MCP server of one request (the transport is stateless): the read tools, resources and prompts
 * for every key, the write tools only for a key with the write scope, so a read-only key does not
 * even list them.
 */
export function createMcpServer(
  { db, logger }: Pick<Deps, 'db' | 'logger'>,
  key: McpKeyHolder,
  actor: Actor,
): McpServer {
  const server = new McpServer({ name: 'stores-service', version: APP_VERSION }, { instructions: INSTRUCTIONS });
  const log = logger.child({ module: 'mcp', mcpKeyId: key.id });
  const listed: (() => Tool)[] = [];

  const addTool: AddTool = (name, spec) => {
    listed.push(() => ({
      name,
      title: spec.title,
      description: spec.description,
      inputSchema: portableJsonSchema(spec.input, 'input') as Tool['inputSchema'],
      outputSchema: portableJsonSchema(spec.output, 'output') as Tool['outputSchema'],
      annotations: spec.annotations,
    }));
    const run = async (args: z.output<typeof spec.input>): Promise<CallToolResult> => {
      try {
        const structured = await spec.run(args);
        return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
      } catch (err) {
        return toolError(err, (unexpected) => log.error({ err: unexpected, tool: name }, 'MCP tool failed'));
      }
    };
    server.registerTool(
      name,
      {
        title: spec.title,
        description: spec.description,
        inputSchema: spec.input,
        outputSchema: spec.output,
        annotations: spec.annotations,
      },
      // The SDK's callback type is a conditional type over the input schema, which TypeScript cannot resolve for a generic one.
      run as unknown as ToolCallback<typeof spec.input>,
    );
  };

  const context: ToolContext = { key, actor, canWrite: key.scopes.includes('write') };
  registerReadTools(addTool, db);
  if (context.canWrite) registerWriteTools(addTool, db, context);
  registerPurchasingTools(addTool, db, context);
  registerCounterTools(addTool, db, context);
  registerLotTools(addTool, db, context);
  registerHazardTools(addTool, db, context);
  registerResources(server, db, (err) => log.error({ err }, 'MCP resource failed'));
  registerPrompts(server);
  // the SDK lists the tools with zod's JSON Schema as it comes (type arrays); the list takes the portable form instead
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed.map((tool) => tool()) }));
  return server;
}

/**
 * A refusal as the tool's error result, in the words (and code) the MCP error format gives it over
 * HTTP, e.g. "MCP_NOT_FOUND: Item not found". Anything unexpected is logged and answered without
 * its internals.
 */
function toolError(err: unknown, logUnexpected: (err: unknown) => void): CallToolResult {
  const fail = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
  if (err instanceof ZodError) {
    const { error } = mcpErrorBody(err, 400, { message: 'Invalid arguments', errors: validationErrors(err) });
    return fail(`${error.code}: ${error.message}`);
  }
  if (err instanceof HttpError && err.status < 500) {
    const { error } = mcpErrorBody(err, err.status, { message: err.message, ...err.details });
    return fail(`${error.code}: ${error.message}`);
  }
  logUnexpected(err);
  return fail('MCP_INTERNAL_ERROR: the tool failed unexpectedly; the error was logged. Try again later.');
}
