import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, toRaw, type Sql } from '../../db/sql';
import { HttpError, NotFound } from '../../http/errors';
import { categoriesService } from '../categories/categories.service';
import { chargeCodesService, type ChargeCodeRow, type ExcludedCategoryRow } from '../chargecodes/chargecodes.service';
import { validateChargeCode } from '../chargecodes/chargecodes.validation';
import { lowStock, lowStockQuery, toLowStockItem, type LowStockItem, type LowStockRow } from '../items/items.queries';
import { itemSearch, itemsService, type ItemReadRow } from '../items/items.service';
import { applySalesFilter, type SalesFilterInput } from '../sales/sales.filters';
import { salesService, type SaleRecord } from '../sales/sales.service';

/** since/until (inclusive; a date is a whole UTC day) and a part of the charge code: the sales list's filter under the MCP names. */
export type SalesPeriod = { since?: string; until?: string; chargeCode?: string };
const salesFilter = ({ since, until, chargeCode }: SalesPeriod): SalesFilterInput => ({
  startDate: since,
  endDate: until,
  chargeCode,
});

export type Paging = { page: number; limit: number };

export type InventoryFilter = { search?: string; category?: string; lowStock?: boolean };

/** An active item as the MCP surface lists it; price and quantities are decimal strings. */
export type InventoryRow = {
  id: number;
  name: string;
  sku: string;
  category: string;
  price: string;
  current_stock: string;
  minimum_stock: string;
  low_stock: boolean;
};

/** An item named by its id or its SKU (exactly one of them). */
export type ItemRef = { itemId?: number; sku?: string };

/** Figures of a set of sales: how many, their totals with VAT as recorded, what was refunded of them, and the rest; decimal strings. */
export type SalesFigures = { count: number; total: string; refunds: string; net: string };

export type SalesGrouping = 'day' | 'chargeCode';
export type SalesSummaryRecord = {
  totals: SalesFigures;
  groups: (SalesFigures & { key: string })[];
  groupCount: number;
};

export type ChargeCodeStatusRecord = {
  code: ChargeCodeRow;
  excludedCategories: ExcludedCategoryRow[];
  /** why a sale on the code would be refused now (the counter's own message), null when it is usable */
  refusal: string | null;
  /** whole days left when it expires within the expiring-soon window, else null */
  daysUntilExpiry: number | null;
  spent: SalesFigures;
};

const FIGURES = [
  'count(*)::int AS count',
  'coalesce(sum(s.total_amount), 0)::text AS total',
  'coalesce(sum(s.refunded_amount), 0)::text AS refunds',
  'coalesce(sum(s.total_amount - s.refunded_amount), 0)::text AS net',
];

/** The group key of a sales summary; days are UTC, as since/until read a plain date. */
const GROUP_KEY: Record<SalesGrouping, string> = {
  day: `to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  chargeCode: 's.charge_code',
};
const GROUP_ORDER: Record<SalesGrouping, string> = {
  day: '1',
  chargeCode: 'sum(s.total_amount - s.refunded_amount) DESC, 1',
};

/**
 * What the MCP surface reads (GET /api/mcp/sales and /inventory, and the /mcp tools): the sales list,
 * the item and charge code services, and the few aggregates they lack, computed in SQL.
 */
export function mcpDataService(db: Db) {
  const figures = (query: Knex.QueryBuilder) => query.select(FIGURES.map((f) => db.raw(f)));

  async function itemIdsFor(refs: ItemRef[]): Promise<number[]> {
    const skus = [...new Set(refs.flatMap((r) => (r.itemId === undefined && r.sku !== undefined ? [r.sku] : [])))];
    const bySku = new Map<string, number>();
    if (skus.length > 0) {
      for (const row of await db('items').whereIn('sku', skus).select<{ id: number; sku: string }[]>('id', 'sku'))
        bySku.set(row.sku, row.id);
    }
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

    /**
     * One page of active items by name, and how many match, in one statement (the items list's
     * way: the matches collected once serve the page and the count, an empty page still counts).
     */
    async inventory(
      filter: InventoryFilter,
      { page, limit }: Paging,
    ): Promise<{ rows: InventoryRow[]; total: number }> {
      const where: Sql[] = [sql`i.is_active`];
      if (filter.category) where.push(sql`lower(c.name) = lower(${filter.category})`);
      if (filter.search) where.push(itemSearch(filter.search));
      if (filter.lowStock !== undefined) where.push(filter.lowStock ? lowStock('i') : sql`NOT (${lowStock('i')})`);
      const { rows } = await toRaw<{ rows: (InventoryRow & { total: number })[] }>(
        db,
        sql`WITH matches AS MATERIALIZED (
             SELECT i.id, i.name, i.sku, c.name AS category, i.price, i.current_stock, i.minimum_stock, (${lowStock('i')}) AS low_stock
               FROM items i JOIN categories c ON c.id = i.category_id
              WHERE ${sql.join(where, sql.raw(' AND '))}
           ), total AS (SELECT count(*)::int AS total FROM matches)
           SELECT m.*, total.total
             FROM total
             LEFT JOIN (SELECT * FROM matches ORDER BY name, id LIMIT ${limit} OFFSET ${(page - 1) * limit}) m ON true
            ORDER BY m.name, m.id`,
      );
      return { rows: rows.filter((r) => r.id !== null), total: rows[0]?.total ?? 0 };
    },

    /** Every category name, alphabetical: what the inventory's category filter takes. */
    async categoryNames(): Promise<string[]> {
      return (await categoriesService(db).list()).map((c) => c.name).sort((a, b) => a.localeCompare(b));
    },

    /** One page of the low-stock list (the one low-stock query, largest shortfall first) and its length. */
    async lowStockPage({ page, limit }: Paging): Promise<{ items: LowStockItem[]; total: number }> {
      const [{ total }] = await lowStockQuery(db).clearSelect().clearOrder().select(db.raw('count(*)::int AS total'));
      const rows: LowStockRow[] = await lowStockQuery(db)
        .limit(limit)
        .offset((page - 1) * limit);
      return { items: rows.map(toLowStockItem), total: total as number };
    },

    /** The ids of items named by id or SKU, in order; an unknown SKU is a 404 naming it (an unknown id is left to the caller). */
    itemIdsFor,

    /** The item (the items service's read) by id or SKU; 404 when there is none. */
    async item(ref: ItemRef): Promise<ItemReadRow> {
      const [id] = await itemIdsFor([ref]);
      return itemsService(db).get(id);
    },

    /** Figures over the filtered sales, and one page of them grouped per UTC day (oldest first) or per charge code (highest net first). */
    async salesSummary(
      period: SalesPeriod,
      groupBy: SalesGrouping,
      { page, limit }: Paging,
    ): Promise<SalesSummaryRecord> {
      const key = GROUP_KEY[groupBy];
      const filter = salesFilter(period);
      const [totals] = await figures(applySalesFilter(db('sales as s'), filter)).select(
        db.raw(`count(DISTINCT ${key})::int AS group_count`),
      );
      // the key is the first column: the orders name it by position
      const groups = await figures(applySalesFilter(db('sales as s'), filter).select(db.raw(`${key} AS key`)))
        .groupByRaw(key)
        .orderByRaw(GROUP_ORDER[groupBy])
        .limit(limit)
        .offset((page - 1) * limit);
      const { group_count: groupCount, ...overall } = totals as SalesFigures & { group_count: number };
      return { totals: overall, groups: groups as SalesSummaryRecord['groups'], groupCount };
    },

    /**
     * Whether a charge code can be used now, by the same validation as a sale (validity window,
     * hold), when it expires, what it excludes, and what has been spent on it. 404 for an unknown code.
     */
    async chargeCodeStatus(code: string, now = new Date()): Promise<ChargeCodeStatusRecord> {
      const codes = chargeCodesService(db);
      const row = await codes.find(code);
      const refusal = await validateChargeCode(db, row.code, { categoryIds: [], now }).then(
        () => null,
        (err: unknown) => {
          if (err instanceof HttpError && err.status === 400) return err.message;
          throw err;
        },
      );
      const expiring = (await codes.expiringSoon(now)).find((e) => e.code.id === row.id);
      const [spent] = await figures(db('sales as s').where('s.charge_code', row.code));
      return {
        code: row,
        excludedCategories: await codes.listExclusions(row.code),
        refusal,
        daysUntilExpiry: expiring?.daysUntilExpiry ?? null,
        spent: spent as SalesFigures,
      };
    },
  };
}
