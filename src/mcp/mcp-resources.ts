import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Db } from '../db/knex';
import { HttpError, NotFound } from '../http/errors';
import { mcpErrorBody } from '../http/mcp-errors';
import { presentItem } from '../modules/items/items.present';
import { presentSale } from '../modules/sales/sales.present';
import { salesService } from '../modules/sales/sales.service';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';

const SKU_SUGGESTIONS = 20;

/**
 * The resources every key reads: an item of the catalogue by SKU and a sale by its number (or id), in
 * the API's own forms (GET /api/items/{id}, GET /api/sales/{id}). A refusal is a JSON-RPC error whose
 * message reads as the MCP error format's ("MCP_NOT_FOUND: ..."); anything unexpected is logged.
 */
export function registerResources(server: McpServer, db: Db, logUnexpected: (err: unknown) => void) {
  const data = mcpDataService(db);
  const sales = salesService(db);

  const read = async (uri: URL, body: () => Promise<unknown>): Promise<ReadResourceResult> => {
    try {
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await body()) }] };
    } catch (err) {
      if (err instanceof HttpError && err.status < 500) {
        const { error } = mcpErrorBody(err, err.status, { message: err.message });
        throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
      }
      logUnexpected(err);
      throw new McpError(
        ErrorCode.InternalError,
        'MCP_INTERNAL_ERROR: the resource could not be read; the error was logged. Try again later.',
      );
    }
  };
  const variable = (value: string | string[]) => decodeURIComponent(String(value));

  server.registerResource(
    'item',
    new ResourceTemplate('stores://items/{sku}', {
      list: undefined,
      complete: {
        sku: async (start) =>
          (await data.inventory({ search: start }, { page: 1, limit: SKU_SUGGESTIONS })).rows.map((row) => row.sku),
      },
    }),
    {
      title: 'An item of the catalogue',
      description:
        'One item (active or not) by its SKU: category, price, VAT rate, stock levels. The SKU completes from what is typed.',
      mimeType: 'application/json',
    },
    (uri, { sku }) => read(uri, async () => ({ item: presentItem(await data.item({ sku: variable(sku) })) })),
  );

  server.registerResource(
    'sale',
    new ResourceTemplate('stores://sales/{saleId}', { list: undefined }),
    {
      title: 'A sale',
      description:
        'One sale by its number (SALE-20261126-18) or numeric id, with its lines, refunds, payment state and recipient.',
      mimeType: 'application/json',
    },
    (uri, { saleId }) =>
      read(uri, async () => {
        const ref = variable(saleId);
        if (/^\d{1,10}$/.test(ref)) return { sale: presentSale(await sales.get(Number(ref))) };
        // the search finds a sale number from its start: the one whose number it is, if any
        const { sales: found } = await sales.list({ search: ref }, 1, 100);
        const sale = found.find(({ sale: row }) => row.sale_id.toLowerCase() === ref.toLowerCase());
        if (!sale) throw NotFound(`No sale numbered '${ref}'`);
        return { sale: presentSale(sale) };
      }),
  );
}

/** The prompts a stores assistant starts from: what tools to call, in what order, and what to answer. */
export function registerPrompts(server: McpServer) {
  server.registerPrompt(
    'reorder_this_week',
    {
      title: 'What should I reorder this week?',
      description:
        'Goes through the replenishment suggestions and the low-stock list and proposes the orders to place, by supplier.',
    },
    () => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              'What should I reorder this week? Call replenishment_suggestions (what is at or below its minimum, net of what pending orders ' +
              'bring, by supplier) and list_low_stock. For each supplier, list the items, the quantity suggested, the unit price and the ' +
              'order total; list apart the short items with no supplier (they need link_item_source first) and those already covered by ' +
              'pending orders. Do not create any order: ask me first, and then use create_replenishment_orders for the items I confirm.',
          },
        },
      ],
    }),
  );

  server.registerPrompt(
    'explain_charge_code_spending',
    {
      title: "Explain this charge code's spending",
      description:
        'Explains what was spent on a charge code: when, on what, refunds, and whether it can still be used.',
      argsSchema: { code: z.string().trim().min(1).max(64).describe('the charge code, exact') },
    },
    ({ code }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Explain the spending on charge code ${code}. Call charge_code_status with code ${code} (whether it can be used now, its ` +
              `expiry, excluded categories and what was spent), sales_summary with chargeCode ${code} grouped by day (when it was ` +
              `spent), and find_sales with chargeCode ${code} (the sales themselves: their lines and recipients). The chargeCode filters ` +
              `match part of a code: leave out sales of other codes. Summarise the total, refunds and net, the largest purchases and ` +
              'what they were for, the trend over time, and anything unusual; amounts in GBP.',
          },
        },
      ],
    }),
  );
}
