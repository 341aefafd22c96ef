import type { Db } from '../db/knex';
import { presentItem } from '../modules/items/items.present';
import { itemsService } from '../modules/items/items.service';
import { salesAnalytics } from '../modules/sales/sales.analytics';
import { presentStockCheck } from '../modules/sales/sales.present';
import { presentMovement } from '../modules/stock-movements/stock-movements.present';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';
import { chargeCodeStatus } from '../modules/sales/sales.charge-code-status';
import {
  presentChargeCodeStatus,
  presentLowStockPage,
  presentSalesSummary,
  presentSearchItems,
} from './mcp-tools.present';
import type { AddTool } from './mcp-tool-spec';
import {
  ChargeCodeStatusInput,
  ChargeCodeStatusOutput,
  CheckStockInput,
  CheckStockOutput,
  GetItemInput,
  GetItemOutput,
  ListLowStockInput,
  ListLowStockOutput,
  SalesSummaryInput,
  SalesSummaryOutput,
  SearchItemsInput,
  SearchItemsOutput,
  StockMovementsInput,
  StockMovementsOutput,
} from './mcp-tools.schemas';

/** Reads change nothing and may be repeated at will. */
const READ = { readOnlyHint: true, openWorldHint: false } as const;

/** The tools every key gets: inventory, stock, sales figures and charge codes, through the same services as the API. */
export function registerReadTools(addTool: AddTool, db: Db) {
  const data = mcpDataService(db);
  const items = itemsService(db);

  addTool('search_items', {
    title: 'Search items',
    description:
      'Active items by name: text in the name, description or SKU, a category name, low stock only. Paged; also lists every category name.',
    input: SearchItemsInput,
    output: SearchItemsOutput,
    annotations: READ,
    run: async ({ page, limit, ...filter }) => {
      const [found, categories] = await Promise.all([data.inventory(filter, { page, limit }), data.categoryNames()]);
      return presentSearchItems(found, categories, { page, limit });
    },
  });

  addTool('get_item', {
    title: 'Get an item',
    description: 'One item (active or not) by id or SKU, with its category, price, VAT rate and stock levels.',
    input: GetItemInput,
    output: GetItemOutput,
    annotations: READ,
    run: async (ref) => ({ item: presentItem(await data.item(ref)) }),
  });

  addTool('list_low_stock', {
    title: 'List low-stock items',
    description: 'Active items at or below their minimum stock, the largest shortfall first. Paged.',
    input: ListLowStockInput,
    output: ListLowStockOutput,
    annotations: READ,
    run: async (page) => presentLowStockPage(await data.lowStockPage(page), page),
  });

  addTool('stock_movements', {
    title: 'Stock movements of an item',
    description:
      'The stock history of one item (by id or SKU), newest first: every change with its reason, who made it and the levels before and after. Paged with beforeId.',
    input: StockMovementsInput,
    output: StockMovementsOutput,
    annotations: READ,
    run: async ({ limit, beforeId, ...ref }) => {
      const [itemId] = await data.itemIdsFor([ref]);
      // one more than the page tells whether an older page exists
      const rows = await items.movements(itemId, limit + 1, beforeId);
      const page = rows.slice(0, limit);
      return {
        movements: page.map(presentMovement),
        nextBeforeId: rows.length > limit ? page[page.length - 1].id : null,
      };
    },
  });

  addTool('check_stock', {
    title: 'Check stock for a basket',
    description:
      'Whether current stock covers each line of a basket (items by id or SKU). available is false for an unknown item id, an inactive item, ' +
      'or when the stock is short; lines on the same item are checked by their sum. An unknown SKU is refused, named in the error.',
    input: CheckStockInput,
    output: CheckStockOutput,
    annotations: READ,
    run: async ({ lines }) => {
      const itemIds = await data.itemIdsFor(lines);
      return presentStockCheck(
        await salesAnalytics(db).stockCheck(lines.map((line, i) => ({ itemId: itemIds[i], quantity: line.quantity }))),
      );
    },
  });

  addTool('sales_summary', {
    title: 'Sales summary',
    description:
      'Sales figures over a period (since/until) and a charge code filter, computed in the database: count, total (with VAT), refunds and net, ' +
      'overall and per UTC day or per charge code (paged groups).',
    input: SalesSummaryInput,
    output: SalesSummaryOutput,
    annotations: READ,
    run: async ({ groupBy, page, limit, ...period }) =>
      presentSalesSummary(await data.salesSummary(period, groupBy, { page, limit }), groupBy, { page, limit }),
  });

  addTool('charge_code_status', {
    title: 'Charge code status',
    description:
      'Whether a charge code can be used now (validity window, hold), whether it expires within 30 days, the categories it excludes, ' +
      'and what has been spent on it so far.',
    input: ChargeCodeStatusInput,
    output: ChargeCodeStatusOutput,
    annotations: READ,
    run: async ({ code }) => presentChargeCodeStatus(await chargeCodeStatus(db, code)),
  });
}
