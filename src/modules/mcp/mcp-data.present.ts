import { amountNumber, quantityNumber } from '../../lib/money';
import { presentExcludedCategory } from '../chargecodes/chargecodes.present';
import { presentLowStockReport } from '../sales/sales.present';
import type { SaleRecord } from '../sales/sales.service';
import type { LowStockItem } from '../items/items.queries';
import type { McpInventoryPage, McpPagination, McpSalesPage } from './mcp-data.schemas';
import type {
  ChargeCodeStatusRecord,
  InventoryRow,
  SalesFigures as FiguresRecord,
  SalesGrouping,
  SalesSummaryRecord,
} from './mcp-data.service';
import type {
  ChargeCodeStatusOutput,
  InventoryEntry,
  ListLowStockOutput,
  SalesFigures,
  SalesSummaryOutput,
  SearchItemsOutput,
} from './mcp-tools.schemas';

type Page = { page: number; limit: number };
const pagination = (total: number, { page, limit }: Page): McpPagination => ({ total, page, limit });

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
  pagination: pagination(total, page),
});

/** GET /api/mcp/inventory: ids as strings, stock and price as JSON numbers, the category by name. */
export const presentMcpInventoryPage = (
  { rows, total }: { rows: InventoryRow[]; total: number },
  categories: string[],
  page: Page,
): McpInventoryPage => ({
  items: rows.map((row) => ({
    id: String(row.id),
    name: row.name,
    category: row.category,
    stock: quantityNumber(row.current_stock),
    price: amountNumber(row.price),
  })),
  categories,
  pagination: pagination(total, page),
});

// ---- the /mcp tools' structured results --------------------------------------------

const presentInventoryEntry = (row: InventoryRow): InventoryEntry => ({
  id: row.id,
  sku: row.sku,
  name: row.name,
  category: row.category,
  stock: quantityNumber(row.current_stock),
  minimumStock: quantityNumber(row.minimum_stock),
  price: row.price,
  lowStock: row.low_stock,
});

export const presentSearchItems = (
  { rows, total }: { rows: InventoryRow[]; total: number },
  categories: string[],
  page: Page,
): SearchItemsOutput => ({
  items: rows.map(presentInventoryEntry),
  categories,
  pagination: pagination(total, page),
});

/** The low-stock report's rows (shortfall included) for one page, and the length of the whole list. */
export const presentLowStockPage = (
  { items, total }: { items: LowStockItem[]; total: number },
  page: Page,
): ListLowStockOutput => ({
  items: presentLowStockReport(items, new Date()).items,
  pagination: pagination(total, page),
});

const presentFigures = (f: FiguresRecord): SalesFigures => ({
  count: f.count,
  total: amountNumber(f.total),
  refunds: amountNumber(f.refunds),
  net: amountNumber(f.net),
});

export const presentSalesSummary = (
  summary: SalesSummaryRecord,
  groupBy: SalesGrouping,
  page: Page,
): SalesSummaryOutput => ({
  groupBy,
  totals: presentFigures(summary.totals),
  groups: summary.groups.map((g) => ({ key: g.key, ...presentFigures(g) })),
  pagination: pagination(summary.groupCount, page),
});

export const presentChargeCodeStatus = ({
  code,
  excludedCategories,
  refusal,
  daysUntilExpiry,
  spent,
}: ChargeCodeStatusRecord): ChargeCodeStatusOutput => ({
  code: code.code,
  title: code.title,
  costCentre: code.cost_centre,
  validFrom: code.valid_from.toISOString(),
  validUntil: code.valid_until.toISOString(),
  valid: refusal === null,
  invalidReason: refusal,
  onHold: code.on_hold,
  holdReason: code.hold_reason,
  expiringSoon: daysUntilExpiry !== null,
  daysUntilExpiry,
  excludedCategories: excludedCategories.map(presentExcludedCategory),
  spent: presentFigures(spent),
});
