import { amountNumber, quantityNumber } from '../lib/money';
import { presentExcludedCategory } from '../modules/chargecodes/chargecodes.present';
import type { LowStockItem } from '../modules/items/items.queries';
import { isLowStock } from '../modules/items/items.service';
import type { ItemReadRow } from '../modules/items/items.service';
import { presentPagination } from '../modules/mcp-data/mcp-data.present';
import type {
  SalesFigures as FiguresRecord,
  SalesGrouping,
  SalesSummaryRecord,
} from '../modules/mcp-data/mcp-data.service';
import type { ChargeCodeSpent, ChargeCodeStatusRecord } from '../modules/sales/sales.charge-code-status';
import { presentLowStockReport } from '../modules/sales/sales.present';
import type {
  ChargeCodeStatusOutput,
  InventoryEntry,
  ListLowStockOutput,
  SalesFigures,
  SalesSummaryOutput,
  SearchItemsOutput,
} from './mcp-tools.schemas';

type Page = { page: number; limit: number };

const presentInventoryEntry = (row: ItemReadRow): InventoryEntry => ({
  id: row.id,
  sku: row.sku,
  name: row.name,
  category: row.category_name,
  stock: quantityNumber(row.current_stock),
  minimumStock: quantityNumber(row.minimum_stock),
  price: row.price,
  lowStock: isLowStock(row),
});

export const presentSearchItems = (
  { rows, total }: { rows: ItemReadRow[]; total: number },
  categories: string[],
  page: Page,
): SearchItemsOutput => ({
  items: rows.map(presentInventoryEntry),
  categories,
  pagination: presentPagination(total, page),
});

/** The low-stock report's rows (shortfall included) for one page, and the length of the whole list. */
export const presentLowStockPage = (
  { items, total }: { items: LowStockItem[]; total: number },
  page: Page,
): ListLowStockOutput => ({
  items: presentLowStockReport(items, new Date()).items,
  pagination: presentPagination(total, page),
});

const presentFigures = (f: FiguresRecord): SalesFigures => ({
  count: f.sales,
  total: amountNumber(f.total_amount),
  refunds: amountNumber(f.refunded_amount),
  net: amountNumber(f.net_amount),
});

const presentSpent = (spent: ChargeCodeSpent): SalesFigures => ({
  count: spent.count,
  total: amountNumber(spent.total),
  refunds: amountNumber(spent.refunds),
  net: amountNumber(spent.net),
});

export const presentSalesSummary = (
  summary: SalesSummaryRecord,
  groupBy: SalesGrouping,
  page: Page,
): SalesSummaryOutput => ({
  groupBy,
  totals: presentFigures(summary.totals),
  groups: summary.groups.map((g) => ({ key: g.key, ...presentFigures(g) })),
  pagination: presentPagination(summary.groupCount, page),
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
  spent: presentSpent(spent),
});
