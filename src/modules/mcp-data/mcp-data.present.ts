import { amountNumber, quantityNumber } from '../../lib/money';
import type { ItemReadRow } from '../items/items.service';
import type { SaleRecord } from '../sales/sales.service';
import type { McpInventoryPage, McpPagination, McpSalesPage } from './mcp-data.schemas';

type Page = { page: number; limit: number };
export const presentPagination = (total: number, { page, limit }: Page): McpPagination => ({ total, page, limit });

/** GET /api/mcp/sales: the spec's snake_case form; ids as strings, the total a JSON number, items the number of lines. */
export const presentMcpSalesPage = (
  { sales, total }: { sales: SaleRecord[]; total: number },
  page: Page,
): McpSalesPage => ({
  sales: sales.map(({ sale, lines }) => ({
    id: String(sale.id),
    charge_code: sale.charge_code,
    total: amountNumber(sale.total_amount),
    items: lines.length,
    timestamp: sale.created_at.toISOString(),
  })),
  pagination: presentPagination(total, page),
});

/** GET /api/mcp/inventory: ids as strings, stock and price as JSON numbers, the category by name. */
export const presentMcpInventoryPage = (
  { rows, total }: { rows: ItemReadRow[]; total: number },
  categories: string[],
  page: Page,
): McpInventoryPage => ({
  items: rows.map((row) => ({
    id: String(row.id),
    name: row.name,
    category: row.category_name,
    stock: quantityNumber(row.current_stock),
    price: amountNumber(row.price),
  })),
  categories,
  pagination: presentPagination(total, page),
});
