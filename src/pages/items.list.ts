import type { Request } from 'express';
import { admitsUnderProfile, MANAGER_UNDER_STRICT } from '../auth/access-profile';
import type { Db } from '../db/knex';
import { currentUser } from '../auth/guards';
import { categoriesService } from '../modules/categories/categories.service';
import { vatRatesService } from '../modules/vat-rates/vat-rates.service';
import { ItemQuery } from '../modules/items/items.schemas';
import { presentItem } from '../modules/items/items.present';
import { itemsService } from '../modules/items/items.service';
import { managesItems, refuseInactiveItemsBelowManager } from '../modules/items/items.policy';
import { filledIn, type FieldErrors } from './forms';
import { wantsPartial } from './page-render';

/** Rows on a page of the items table (the API's own default is 10). */
const ITEMS_PER_PAGE = 20;

/** What the bulk form shows after a refused action: the message, the fields' errors, what was chosen. */
export type BulkFormState = { message: string | null; errors: FieldErrors; values: Record<string, string> };

/** The list's address for other filters or another page: only what differs from the defaults. */
function listHref(query: ItemQuery, overrides: Partial<ItemQuery> = {}): string {
  const next = { ...query, ...overrides };
  const params = new URLSearchParams();
  if (next.search) params.set('search', next.search);
  if (next.categoryId !== undefined) params.set('categoryId', String(next.categoryId));
  if (next.includeInactive) params.set('includeInactive', 'true');
  if (next.limit !== ITEMS_PER_PAGE) params.set('limit', String(next.limit));
  if (next.page > 1) params.set('page', String(next.page));
  const search = params.toString();
  return search ? `/items?${search}` : '/items';
}

/** The list's query string as the API's schema reads it: a page of the list's size, a form's empty field (all categories, no search) a filter off. */
export const itemsListQuery = (raw: Record<string, unknown>) => ({ limit: String(ITEMS_PER_PAGE), ...filledIn(raw) });

/**
 * The items list page as a query string asks for it, through the API's schema and the items
 * service's one list statement (with the categories, and for managers the VAT rates, that the
 * page's forms offer); a `user` asking for inactive items is refused, as by the API.
 */
export function itemsListView(db: Db) {
  const items = itemsService(db);
  const categories = categoriesService(db);
  const vatRates = vatRatesService(db);

  return async (req: Request, query: ItemQuery, bulk: BulkFormState = { message: null, errors: {}, values: {} }) => {
    const isManager = managesItems(currentUser(req));
    refuseInactiveItemsBelowManager(currentUser(req), query.includeInactive);
    // htmx asks for the rows only (_rows.ejs): the filters' and bulk form's choices are already on the page
    const wholePage = !wantsPartial(req);
    const [{ rows, total }, categoryRows, rates, mayImportAndExport] = await Promise.all([
      items.list(query),
      wholePage ? categories.list() : [],
      // only the managers' bulk "Change VAT rate" offers the rates
      wholePage && isManager ? vatRates.list() : [],
      wholePage && admitsUnderProfile(db, currentUser(req), MANAGER_UNDER_STRICT),
    ]);
    const totalPages = Math.max(1, Math.ceil(total / query.limit));
    return {
      title: 'Items',
      scripts: ['/assets/js/items.js'],
      stylesheets: ['/assets/css/items.css'],
      query,
      items: rows.map(presentItem),
      total,
      categories: categoryRows,
      vatRates: rates,
      mayImportAndExport,
      listHref: listHref(query),
      pager: {
        page: query.page,
        totalPages,
        previous: query.page > 1 ? listHref(query, { page: query.page - 1 }) : null,
        next: query.page < totalPages ? listHref(query, { page: query.page + 1 }) : null,
      },
      bulk,
    };
  };
}
