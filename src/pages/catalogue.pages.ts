import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import type { Db } from '../db/knex';
import { currentUser, isStaff } from '../auth/guards';
import { BadRequest } from '../http/errors';
import { D, money } from '../lib/money';
import { categoriesService } from '../modules/categories/categories.service';
import { actorOf } from '../modules/audit/audit.actor';
import { itemsService } from '../modules/items/items.service';
import { chargeCodePolicy } from '../modules/chargecodes/chargecodes.policy';
import { validateChargeCode } from '../modules/chargecodes/chargecodes.validation';
import { catalogueService } from '../modules/catalogue/catalogue.service';
import { basketsService, type RequestBasket } from '../modules/catalogue/baskets.service';
import { presentCatalogueChargeCode, presentCatalogueItem } from '../modules/catalogue/catalogue.present';
import { CatalogueQuery } from '../modules/catalogue/catalogue.schemas';
import { CreateRequest } from '../modules/requests/requests.schemas';
import { LineRequest } from '../modules/sales/quotes.schemas';
import { requestsService } from '../modules/requests/requests.service';
import { hazardOf } from '../modules/items/items.service';
import { presentHazard } from '../modules/hazards/hazards.present';
import { hazardView } from '../modules/hazards/hazards.service';
import { safetyDataSheetsService } from '../modules/safety-data-sheets/safety-data-sheets.service';
import { coshhReferenceMessage } from '../modules/sales/sales.service';
import { attempt, filledIn, flash, textField, type Attempt, type FieldErrors } from './forms';
import { safeNext } from './page-guards';
import { PageRouter, type PageRequest, type Sent } from './page-route';
import { wantsPartial } from './page-render';
import { ASSETS, myRequests, REQUEST_VIEW_HELPERS } from './requests.pages';

/** Items on a page of the catalogue. */
const CATALOGUE_PAGE_SIZE = 24;
/** The most lines a basket holds (a request of more is a purchase order). */
const MAX_BASKET_LINES = 100;
/** How many of the person's requests the catalogue (and a requester's home) lists. */
const RECENT_REQUESTS = 5;
/** An htmx refusal replaces the layout's alert region and leaves the rest of the page as it was. */
const TO_ALERTS = { 'HX-Retarget': '#alerts', 'HX-Reswap': 'innerHTML' };

type ChargeCodeField = { value: string; error: string | null; accepted: boolean };
type BasketForm = {
  message: string | null;
  errors: FieldErrors;
  chargeCode?: ChargeCodeField;
  /** issue 43: the lines (item ids) whose "I have read the safety data sheet" was ticked, and the COSHH reference typed */
  sdsRead?: Set<number>;
  coshhReference?: string;
};
/**
 * Issue 43: what the basket's submit form asks of each line: whether its item is hazardous (the
 * requester ticks "I have read the safety data sheet"), has a safety data sheet to read, needs a COSHH reference.
 */
type BasketSafety = Map<number, { hazardous: boolean; hasSds: boolean; needsCoshhReference: boolean }>;
const COSHH_MISSING = coshhReferenceMessage('');
type Refusal = Extract<Attempt<unknown>, { ok: false }>;
/** A route that may show the catalogue again: its query declared. */
type CataloguePage = PageRequest<{ readonly query: CatalogueQuery }>;

const refusalMessage = (refusal: Refusal): string =>
  Object.values(refusal.errors).length > 0 ? Object.values(refusal.errors).join('; ') : refusal.message;

/** Issue 43: the item ids of the submit form's ticked "I have read the safety data sheet" boxes (name sdsRead, one a line). */
function sdsReadOf(body: Record<string, unknown>): Set<number> {
  const ticked = Array.isArray(body.sdsRead) ? body.sdsRead : [body.sdsRead];
  return new Set(ticked.map((value) => Number(textField(value))).filter((id) => Number.isInteger(id) && id > 0));
}

/** The catalogue's query string as its schema reads it: a page of its size, a filter left empty off. */
const catalogueQuery = (query: Sent) => ({ limit: String(CATALOGUE_PAGE_SIZE), ...filledIn(query) });

/** The catalogue as a route that shows it again (a refused basket change, a requester's home) declares it: its first page, whatever the address asks. */
export const CATALOGUE_FIRST_PAGE = { query: CatalogueQuery, fromQuery: () => catalogueQuery({}) };

/** The catalogue's address for a query (the "Add to request" forms come back to it). */
function catalogueHref(query: CatalogueQuery, page = query.page): string {
  const params = new URLSearchParams();
  if (query.search) params.set('search', query.search);
  if (query.categoryId !== undefined) params.set('categoryId', String(query.categoryId));
  if (page > 1) params.set('page', String(page));
  const search = params.toString();
  return search ? `/catalogue?${search}` : '/catalogue';
}

/** The basket as the page shows it, with the charge-code field's state and the form's refusal. */
function basketView(basket: RequestBasket, safety: BasketSafety, form: BasketForm = { message: null, errors: {} }) {
  const lines = basket.lines.map((line, index) => {
    const safe = safety.get(line.itemId);
    return {
      ...line,
      total: money(new D(line.price).times(line.quantity)),
      // issue 43
      hazardous: safe?.hazardous ?? false,
      sdsHref: safe?.hasSds ? `/items/${line.itemId}/sds` : null,
      sdsRead: form.sdsRead?.has(line.itemId) ?? false,
      sdsError: form.errors[`items.${index}.sdsAcknowledged`] ?? null,
    };
  });
  return {
    lines,
    needsCoshhReference: basket.lines.some((line) => safety.get(line.itemId)?.needsCoshhReference),
    coshhReference: form.coshhReference ?? '',
    total: money(lines.reduce((sum, line) => sum.plus(line.total), new D(0))),
    chargeCode: form.chargeCode ?? { value: basket.chargeCode, error: null, accepted: false },
    form: {
      values: { notes: basket.notes, neededBy: basket.neededBy, coshhReference: form.coshhReference ?? '' },
      errors: form.errors,
    },
    message: form.message,
  };
}

/** The catalogue page's views: the page (also a requester's home), its results, the basket's charge-code check. */
export function catalogueViews(db: Db) {
  const catalogue = catalogueService(db);
  const categories = categoriesService(db);
  const baskets = basketsService(db);
  const sheets = safetyDataSheetsService(db);

  /** Issue 43: the basket's items now, as its submit form asks of them (one read each, none for an empty basket). */
  async function basketSafety(basket: RequestBasket): Promise<BasketSafety> {
    const ids = basket.lines.map((line) => line.itemId);
    const [found, withSheet] = await Promise.all([itemsService(db).forLines(ids), sheets.itemsWithSheet(ids)]);
    return new Map(
      ids.map((id) => [
        id,
        {
          hazardous: found.get(id)?.hazardous ?? false,
          hasSds: withSheet.has(id),
          needsCoshhReference: found.get(id)?.needsCoshhReference ?? false,
        },
      ]),
    );
  }

  /** The codes the person is an authorised user of (matched by email), for the basket's Charge code. */
  const chargeCodesOf = async (user: Express.User) =>
    (await catalogue.chargeCodesOf(user.email)).map((record) => presentCatalogueChargeCode(record));

  /**
   * The basket's charge code checked as the request will be (the counter's messages): for the items
   * in the basket, and with chargeCodes.requireAuthorisedUser on, for this person as its authorised user
   * (a requester always: one message for any code they are not authorised on).
   */
  async function checkChargeCode(user: Express.User, code: string, basket: RequestBasket): Promise<ChargeCodeField> {
    if (!code) return { value: '', error: null, accepted: false };
    const categoryIds = basket.lines.map((line) => line.categoryId).filter((id): id is number => id !== null);
    const check = await attempt(async () => {
      const policy = await chargeCodePolicy(db);
      return validateChargeCode(db, code, {
        categoryIds,
        requester: isStaff(user) ? undefined : user.email,
        sale: {
          policy: { requirePin: false, requireAuthorisedUser: policy.requireAuthorisedUser },
          verifiedPinHash: null,
          recipientEmail: user.email,
        },
      });
    });
    return check.ok
      ? { value: code, error: null, accepted: true }
      : { value: code, error: refusalMessage(check), accepted: false };
  }

  async function catalogueView(req: Request, query: CatalogueQuery, form?: BasketForm) {
    const user = currentUser(req);
    const wholePage = !wantsPartial(req);
    const basket = await baskets.get(user.id);
    const [found, categoryRows, chargeCodes, mine, safety] = await Promise.all([
      catalogue.items(query),
      wholePage ? categories.list() : [],
      wholePage ? chargeCodesOf(user) : [],
      wholePage ? myRequests(db, user, RECENT_REQUESTS) : [],
      basketSafety(basket),
    ]);
    // issue 43: each item's pictograms and signal word, and a link to its safety data sheet when it has one
    const withSheet = await sheets.itemsWithSheet(found.rows.map((row) => row.id));
    const totalPages = Math.max(1, Math.ceil(found.total / query.limit));
    return {
      ...ASSETS,
      ...REQUEST_VIEW_HELPERS,
      title: 'Catalogue',
      description: 'The stores catalogue: find items, see whether they are in stock and request them on a charge code.',
      query,
      items: found.rows.map((row) => ({
        ...presentCatalogueItem(row),
        hazard: hazardView(presentHazard(hazardOf(row))),
        sdsHref: withSheet.has(row.id) ? `/items/${row.id}/sds` : null,
      })),
      total: found.total,
      categories: categoryRows,
      returnTo: catalogueHref(query),
      pager: {
        page: query.page,
        totalPages,
        previous: query.page > 1 ? catalogueHref(query, query.page - 1) : null,
        next: query.page < totalPages ? catalogueHref(query, query.page + 1) : null,
      },
      chargeCodes,
      basket: basketView(
        basket,
        safety,
        form ?? { message: null, errors: {}, chargeCode: await checkChargeCode(user, basket.chargeCode, basket) },
      ),
      mine,
    };
  }

  /** The catalogue page, or (htmx: a search as one types, another page) its results. */
  async function renderCatalogue(
    req: Request,
    res: Response,
    { query, form, status = 200 }: { query: CatalogueQuery; form?: BasketForm; status?: number },
  ) {
    const view = await catalogueView(req, query, form);
    res.status(status).render(wantsPartial(req) ? 'catalogue/_results' : 'catalogue/index', view);
  }

  return { chargeCodesOf, checkChargeCode, renderCatalogue, basketSafety };
}

/**
 * `/catalogue` (everyone signed in) and its request basket, kept per person in the database (it
 * follows them across devices). Each change locks the basket, and the page still sends its changes
 * one at a time (hx-sync queue on .catalogue-layout), each answered with the basket as it then is.
 */
export function cataloguePages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const requests = requestsService(db);
  const items = itemsService(db);
  const baskets = basketsService(db);
  const { chargeCodesOf, checkChargeCode, renderCatalogue, basketSafety } = catalogueViews(db);

  /** After a basket change: htmx gets the basket back, a plain form the catalogue page it came from (post/redirect/get). */
  async function basketChanged(req: Request, res: Response, message: string) {
    if (wantsPartial(req)) {
      const basket = await baskets.get(currentUser(req).id);
      return res.render('catalogue/_basket', {
        basket: basketView(basket, await basketSafety(basket), {
          message: null,
          errors: {},
          chargeCode: await checkChargeCode(currentUser(req), basket.chargeCode, basket),
        }),
        chargeCodes: await chargeCodesOf(currentUser(req)),
        // said in the status region too: on a phone the basket is below the catalogue
        announce: message,
      });
    }
    flash(req, message);
    const back = safeNext(req.body.returnTo);
    res.redirect(303, back.startsWith('/catalogue') ? back : '/catalogue');
  }

  /** A refused basket change: htmx shows it in the alert region, a plain form the catalogue with it. */
  async function basketRefused(req: CataloguePage, res: Response, refusal: Refusal) {
    const message = refusalMessage(refusal);
    if (wantsPartial(req)) return res.status(refusal.status).set(TO_ALERTS).render('partials/_alert', { message });
    await renderCatalogue(req, res, { query: req.input.query, form: { message, errors: {} }, status: refusal.status });
  }

  pages.get(
    '/catalogue',
    { access: 'requester', query: CatalogueQuery, fromQuery: catalogueQuery },
    async (req, res) => {
      await renderCatalogue(req, res, { query: req.input.query });
    },
  );

  pages.post(
    '/catalogue/basket/add',
    {
      access: 'requester',
      ...CATALOGUE_FIRST_PAGE,
      form: LineRequest,
      fromForm: (body) => ({ itemId: body.itemId, quantity: body.quantity }),
    },
    async (req, res) => {
      const result = await attempt(async () => {
        const { itemId, quantity } = req.input.form;
        return baskets.change(currentUser(req).id, async (basket) => {
          const existing = basket.lines.find((line) => line.itemId === itemId);
          if (existing) {
            existing.quantity = new D(existing.quantity).plus(quantity).toString();
          } else {
            if (basket.lines.length >= MAX_BASKET_LINES)
              throw BadRequest(`A request holds at most ${MAX_BASKET_LINES} items: submit this one first`);
            const item = await items.get(itemId);
            if (!item.is_active) throw BadRequest(`${item.name} is no longer in the catalogue`);
            basket.lines.push({
              itemId,
              name: item.name,
              sku: item.sku,
              price: item.price,
              categoryId: item.category_id,
              quantity,
            });
          }
          return existing ?? basket.lines.at(-1)!;
        });
      }, [400, 404, 409, 422]);
      if (!result.ok) return basketRefused(req, res, result);
      await basketChanged(req, res, `${result.value.name} added to your request`);
    },
  );

  pages.post(
    '/catalogue/basket/lines/:itemId',
    {
      access: 'requester',
      ...CATALOGUE_FIRST_PAGE,
      params: LineRequest.pick({ itemId: true }),
      form: LineRequest,
      fromForm: (body, req) => ({ itemId: req.params.itemId, quantity: body.quantity }),
    },
    async (req, res) => {
      const result = await attempt(() => {
        const { itemId } = req.input.params;
        return baskets.change(currentUser(req).id, (basket) => {
          const line = basket.lines.find((l) => l.itemId === itemId);
          if (!line) return null; // already removed (another tab or device): nothing to change
          if (req.body.action === 'remove') basket.lines = basket.lines.filter((l) => l !== line);
          else line.quantity = req.input.form.quantity;
          return line;
        });
      });
      if (!result.ok) return basketRefused(req, res, result);
      const name = result.value?.name ?? 'The item';
      await basketChanged(
        req,
        res,
        req.body.action === 'remove' ? `${name} removed from your request` : `${name} updated`,
      );
    },
  );

  // The charge code checked as it is chosen (htmx), kept in the basket with the other fields.
  pages.post('/catalogue/basket/charge-code', { access: 'requester', ...CATALOGUE_FIRST_PAGE }, async (req, res) => {
    const basket = await baskets.change(currentUser(req).id, (kept) => {
      kept.chargeCode = textField(req.body.chargeCode).trim().slice(0, 100);
      return kept;
    });
    const field = await checkChargeCode(currentUser(req), basket.chargeCode, basket);
    const chargeCodes = await chargeCodesOf(currentUser(req));
    if (wantsPartial(req)) return res.render('catalogue/_charge-code', { field, chargeCodes });
    await renderCatalogue(req, res, { query: req.input.query, form: { message: null, errors: {}, chargeCode: field } });
  });

  pages.post(
    '/catalogue/basket/submit',
    {
      access: 'requester',
      ...CATALOGUE_FIRST_PAGE,
      form: CreateRequest,
      fromForm: (body, _req, basket: RequestBasket) => ({
        chargeCode: basket.chargeCode,
        // issue 43: each line's "I have read the safety data sheet" tick, and the COSHH reference when asked
        items: basket.lines.map((line) => ({
          itemId: line.itemId,
          quantity: line.quantity,
          sdsAcknowledged: sdsReadOf(body).has(line.itemId),
        })),
        ...filledIn({
          notes: basket.notes.trim(),
          neededBy: basket.neededBy,
          coshhReference: textField(body.coshhReference).trim(),
        }),
      }),
    },
    async (req, res) => {
      const basket = await baskets.change(currentUser(req).id, (kept) => {
        kept.chargeCode = textField(req.body.chargeCode).trim().slice(0, 100);
        kept.notes = textField(req.body.notes).slice(0, 1000);
        kept.neededBy = textField(req.body.neededBy);
        return kept;
      });
      const field = await checkChargeCode(currentUser(req), basket.chargeCode, basket);
      const result = await attempt(() => {
        if (basket.lines.length === 0) throw BadRequest('Your request is empty: add items from the catalogue first');
        if (!basket.chargeCode)
          throw BadRequest('Choose the charge code to pay for the request', {
            errors: [{ field: 'chargeCode', message: 'Choose a charge code' }],
          });
        if (field.error) throw BadRequest(field.error);
        return requests.create({ user: currentUser(req), actor: actorOf(req) }, req.input.formWith(basket));
      });
      if (!result.ok) {
        const chargeCodeError = result.errors.chargeCode ?? field.error;
        const chargeCode = chargeCodeError
          ? { value: basket.chargeCode, error: chargeCodeError, accepted: false }
          : field;
        // issue 43: a missing COSHH reference is said beside its field; the ticks and the reference typed are kept
        const errors = result.message.startsWith(COSHH_MISSING)
          ? { ...result.errors, coshhReference: result.message }
          : result.errors;
        return renderCatalogue(req, res, {
          query: req.input.query,
          form: {
            message: result.message,
            errors,
            chargeCode,
            sdsRead: sdsReadOf(req.body),
            coshhReference: textField(req.body.coshhReference),
          },
          status: result.status,
        });
      }
      await baskets.clear(currentUser(req).id);
      const { request } = result.value;
      flash(req, `Request ${request.reference} submitted`);
      res.redirect(303, `/requests/${request.id}`);
    },
  );

  return pages.router;
}
