import type { Request, Router } from 'express';
import type { Deps } from '../deps';
import { PageParam } from '../http/pagination';
import { IntId } from '../http/validate';
import { itemsService, type MatchedItem } from '../modules/items/items.service';
import { salesService } from '../modules/sales/sales.service';
import { presentMovement } from '../modules/stock-movements/stock-movements.present';
import { MovementQuery, type StockMovement } from '../modules/stock-movements/stock-movements.schemas';
import { stockMovementsService } from '../modules/stock-movements/stock-movements.service';
import { attempt, filledIn, type FieldErrors } from './forms';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

const TYPE_LABELS: Record<StockMovement['type'], string> = { in: 'In', out: 'Out', adjustment: 'Adjustment' };

/**
 * The API's ledger filter, in keyset pages: before (the movements older than that id: the next
 * page) or after (the ones just newer: the previous page). No total is counted, so a page costs
 * the same however long the ledger grows; page (a numbered page of an older link) still opens by offset.
 */
const LedgerQuery = MovementQuery.extend({ page: PageParam, before: IntId.optional(), after: IntId.optional() });

/** Items offered when a typed item names several. */
const ITEM_CHOICES = 10;

/** The filter form's values as typed (strings), for re-showing them and for page links. */
const typedFilter = (query: Request['query']) => {
  const text = (key: string) => {
    const value = query[key];
    return typeof value === 'string' ? value.trim() : '';
  };
  return { item: text('item'), type: text('type'), startDate: text('startDate'), endDate: text('endDate') };
};
type TypedFilter = ReturnType<typeof typedFilter>;

/** The typed filter as query parameters: only the fields in use, plus extra. */
function filterParams(values: TypedFilter, extra: Record<string, string> = {}): URLSearchParams {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...values, ...extra })) if (value !== '') params.set(key, value);
  return params;
}

/** A movement with where its item and its cause can be opened. */
type LedgerRow = StockMovement & {
  typeLabel: string;
  itemHref: string | null;
  referenceLabel: string | null;
  referenceHref: string | null;
};

const REFERENCE_LABELS: Record<string, string> = { sale: 'Sale', order: 'Order' };

export function stockMovementsPages({ db, reads }: Deps): Router {
  const pages = new PageRouter(db);
  const items = itemsService(db);
  const sales = salesService(db);

  /**
   * The item a person typed: the one whose SKU or name it is exactly (as order lines are matched),
   * else the one item whose SKU, name or description contains it; several such are offered to choose from.
   */
  async function findItem(typed: string): Promise<{ item: MatchedItem | null; choices: MatchedItem[] }> {
    const exact = (await items.matcherForLines([{ name: typed, sku: typed }]))({ name: typed, sku: typed });
    if (exact) return { item: exact, choices: [] };
    const { rows } = await items.list({ search: typed, includeInactive: true, page: 1, limit: ITEM_CHOICES });
    const found = rows.map(({ id, name, sku }) => ({ id, name, sku }));
    return found.length === 1 ? { item: found[0], choices: [] } : { item: null, choices: found };
  }

  /** Links to each movement's item (while it exists) and to the sale or order that caused it. */
  async function withLinks(rows: StockMovement[]): Promise<LedgerRow[]> {
    const saleIds = await sales.idsBySaleNumber(
      rows.flatMap((m) => (m.referenceType === 'sale' && m.referenceId ? [m.referenceId] : [])),
    );
    const referenceHref = (m: StockMovement) => {
      if (!m.referenceId) return null;
      if (m.referenceType === 'sale') return saleIds.has(m.referenceId) ? `/sales/${saleIds.get(m.referenceId)}` : null;
      // an order page takes the order number (O1012) as well as its id
      if (m.referenceType === 'order') return `/orders/${encodeURIComponent(m.referenceId)}`;
      return null;
    };
    return rows.map((m) => ({
      ...m,
      typeLabel: TYPE_LABELS[m.type],
      itemHref: m.itemId === null ? null : `/items/${m.itemId}`,
      referenceLabel: m.referenceId
        ? `${REFERENCE_LABELS[m.referenceType ?? ''] ?? m.referenceType ?? ''} ${m.referenceId}`.trim()
        : null,
      referenceHref: referenceHref(m),
    }));
  }

  pages.use('/stock-movements', (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/stock-movements.css'];
    next();
  });

  pages.get('/stock-movements', { access: 'user', query: LedgerQuery, fromQuery: filledIn }, async (req, res) => {
    const values = typedFilter(req.query);
    const view = 'stock-movements/' + (wantsPartial(req) ? '_list' : 'index');
    const base = {
      title: 'Stock movements',
      values,
      typeLabels: TYPE_LABELS,
      errors: {} as FieldErrors,
      message: null as string | null,
      itemChoices: [] as (MatchedItem & { href: string })[],
      movements: [] as LedgerRow[],
      pagination: null as unknown,
    };
    const query = await attempt(() => req.input.query);
    if (!query.ok) {
      res.status(query.status).render(view, { ...base, errors: query.errors, message: query.message });
      return;
    }
    const { page, limit, before, after, ...filter } = query.value;
    if (values.item !== '') {
      const { item, choices } = await findItem(values.item);
      if (!item) {
        const itemChoices = choices.map((c) => ({
          ...c,
          href: `/stock-movements?${filterParams(values, { item: c.sku, limit: String(limit) })}`,
        }));
        const message = choices.length > 0 ? null : `No item has the SKU or name “${values.item}”.`;
        res.render(view, { ...base, itemChoices, message });
        return;
      }
      filter.itemId = item.id;
    }
    // one row more than shown tells whether there is a page beyond in the direction read
    // the ledger reads a read replica when one is healthy and has the caller's own writes (issue 44)
    const rows = await stockMovementsService(reads.forReports(req)).list({
      ...filter,
      limit: limit + 1,
      ...(after !== undefined
        ? { afterId: after }
        : before !== undefined
          ? { beforeId: before }
          : { offset: (page - 1) * limit }),
    });
    const more = rows.length > limit;
    const shown = after !== undefined ? rows.slice(rows.length - Math.min(rows.length, limit)) : rows.slice(0, limit);
    const href = (cursor: Record<string, string>) =>
      `/stock-movements?${filterParams(values, { limit: String(limit), ...cursor })}`;
    const [newest, oldest] = [shown.at(0), shown.at(-1)];
    const hasNewer = after !== undefined ? more : before !== undefined || page > 1;
    const hasOlder = after !== undefined ? true : more;
    res.render(view, {
      ...base,
      movements: await withLinks(shown.map(presentMovement)),
      pagination: {
        previous: hasNewer && newest ? href({ after: String(newest.id) }) : null,
        next: hasOlder && oldest ? href({ before: String(oldest.id) }) : null,
      },
    });
  });

  return pages.router;
}
