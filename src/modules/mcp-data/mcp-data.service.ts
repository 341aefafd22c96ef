import type { Db } from '../../db/knex';
import { NotFound } from '../../http/errors';
import { lowStockPage, type LowStockItem } from '../items/items.queries';
import { categoriesService } from '../categories/categories.service';
import { itemsService, type ItemReadRow } from '../items/items.service';
import { chargeCodeFigures, periodFigures, type SalesFiguresRow } from '../sales/sales.figures';
import { resolveSalesFilter, type SalesFilterInput } from '../sales/sales.filters';
import { salesService, type SaleRecord } from '../sales/sales.service';
import { D } from '../../lib/money';

/** since/until (inclusive; a date is a whole UTC day) and a part of the charge code: the sales list's filter under the MCP names. */
export type SalesPeriod = { since?: string; until?: string; chargeCode?: string };
const salesFilter = ({ since, until, chargeCode }: SalesPeriod): SalesFilterInput => ({
  startDate: since,
  endDate: until,
  chargeCode,
});

export type Paging = { page: number; limit: number };

export type InventoryFilter = { search?: string; category?: string; lowStock?: boolean };

/** An item named by its id or its SKU (exactly one of them). */
export type ItemRef = { itemId?: number; sku?: string };

/** Figures of a set of sales (the sales figures' own), without a key. */
export type SalesFigures = Omit<SalesFiguresRow, 'key'>;

export type SalesGrouping = 'day' | 'chargeCode';
export type SalesSummaryRecord = {
  totals: SalesFigures;
  groups: SalesFiguresRow[];
  groupCount: number;
};

const sumOf = (groups: SalesFigures[]): SalesFigures => {
  const sum = (field: 'total_amount' | 'refunded_amount' | 'net_amount') =>
    groups.reduce((total, group) => total.plus(group[field]), new D(0)).toString();
  return {
    sales: groups.reduce((count, group) => count + group.sales, 0),
    total_amount: sum('total_amount'),
    refunded_amount: sum('refunded_amount'),
    net_amount: sum('net_amount'),
  };
};

/** The highest net first; the sort is stable, so equal nets keep the figures' order (by code). */
const byNetDescending = (groups: SalesFiguresRow[]) =>
  [...groups].sort((a, b) => new D(b.net_amount).comparedTo(a.net_amount));

/**
 * What MCP clients read (GET /api/mcp/sales and /inventory, and the /mcp tools), through the sales
 * list and figures, the items list and the categories: this module has no table of its own.
 */
export function mcpDataService(db: Db) {
  const items = itemsService(db);

  async function itemIdsFor(refs: ItemRef[]): Promise<number[]> {
    const skus = [...new Set(refs.flatMap((r) => (r.itemId === undefined && r.sku !== undefined ? [r.sku] : [])))];
    const bySku = await items.idsBySku(skus);
    return refs.map((ref) => {
      if (ref.itemId !== undefined) return ref.itemId;
      const id = bySku.get(ref.sku ?? '');
      if (id === undefined) throw NotFound(`No item with SKU '${ref.sku}'`);
      return id;
    });
  }

  return {
    /** One page of sales, newest first, with their lines (the sales list itself). */
    salesPage(period: SalesPeriod, { page, limit }: Paging): Promise<{ sales: SaleRecord[]; total: number }> {
      return salesService(db).list(salesFilter(period), page, limit);
    },

    /** One page of active items by name (the items list), and how many match; an unknown category matches nothing. */
    async inventory(
      { search, category, lowStock }: InventoryFilter,
      { page, limit }: Paging,
    ): Promise<{ rows: ItemReadRow[]; total: number }> {
      const categoryId = category ? (await categoriesService(db).findByName(category))?.id : undefined;
      if (category && categoryId === undefined) return { rows: [], total: 0 };
      return items.list({ search, categoryId, lowStock, page, limit });
    },

    /** Every category name, alphabetical: what the inventory's category filter takes. */
    async categoryNames(): Promise<string[]> {
      return (await categoriesService(db).list()).map((c) => c.name).sort((a, b) => a.localeCompare(b));
    },

    /** One page of the low-stock list (the one low-stock query, largest shortfall first) and its length. */
    lowStockPage(paging: Paging): Promise<{ items: LowStockItem[]; total: number }> {
      return lowStockPage(db, paging);
    },

    /** The ids of items named by id or SKU, in order; an unknown SKU is a 404 naming it (an unknown id is left to the caller). */
    itemIdsFor,

    /** The item (the items service's read) by id or SKU; 404 when there is none. */
    async item(ref: ItemRef): Promise<ItemReadRow> {
      const [id] = await itemIdsFor([ref]);
      return items.get(id);
    },

    /**
     * The sales figures over the filtered sales, and one page of them per UTC day (oldest first) or
     * per charge code (highest net first): a group per day or code, so few enough to page here.
     */
    async salesSummary(
      period: SalesPeriod,
      groupBy: SalesGrouping,
      { page, limit }: Paging,
    ): Promise<SalesSummaryRecord> {
      const filter = await resolveSalesFilter(db, salesFilter(period));
      const groups =
        groupBy === 'day'
          ? await periodFigures(db, filter, 'day')
          : byNetDescending(await chargeCodeFigures(db, filter));
      return {
        totals: sumOf(groups),
        groups: groups.slice((page - 1) * limit, page * limit),
        groupCount: groups.length,
      };
    },
  };
}
