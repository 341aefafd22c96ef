import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { actorOf } from '../modules/audit/audit.actor';
import { BadRequest } from '../http/errors';
import { IntId } from '../http/validate';
import { z } from 'zod';
import { D } from '../lib/money';
import { formatMoney, formatQuantity } from '../lib/format';
import { categoriesService } from '../modules/categories/categories.service';
import {
  ChangeCountBody,
  CountBody,
  CreateStocktake,
  PostStocktake,
  StocktakeCountParams,
  StocktakeListQuery,
  StocktakeParams,
  type StocktakeScope,
  type StocktakeStatus,
} from '../modules/stocktakes/stocktakes.schemas';
import {
  managesStocktakes,
  scanRightsOf,
  seesExpected,
  STOCKTAKE_MANAGERS,
  stocktakesService,
  takesCounts,
  type StocktakeTotals,
} from '../modules/stocktakes/stocktakes.service';
import {
  FULL_VIEW,
  presentCount,
  presentCountResult,
  presentStocktake,
  presentStocktakeLine,
  presentStocktakePage,
  presentStocktakeSummary,
  presentSuggestions,
} from '../modules/stocktakes/stocktakes.present';
import {
  attempt,
  checked,
  flash,
  repeatedField,
  textField,
  unknownCodeMessage,
  type Attempt,
  type FieldErrors,
} from './forms';
import { lotNumberRequiredMessage } from '../modules/lots/lots.picking';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

/** A line of a stocktake: the stocktake's id and the line's item's. */
const RecountParams = z.object({ id: IntId, itemId: IntId });

const ASSETS = { stylesheets: ['/assets/css/stocktakes.css'], scripts: ['/assets/js/stocktakes.js'] };
const STATUS_LABELS: Record<StocktakeStatus, string> = { open: 'Open', posted: 'Posted', cancelled: 'Cancelled' };
/** The review page's line filters. */
const FILTER_LABELS = { all: 'All lines', variance: 'With a variance', uncounted: 'Not counted' } as const;
type ReviewFilter = keyof typeof FILTER_LABELS;
const REVIEW_PAGE_LINES = 100;
/** The scans the count page lists: its person's own last ones. */
const SCANS_SHOWN = 20;
/** The cycle-count suggestions offered on the list. */
const SUGGESTION_DAYS = 90;
const SUGGESTION_LIMIT = 50;
/** A tracked item scanned without its lot: the count page asks for it (the message of lots.picking's lotNumberRequiredMessage). */
const LOT_REQUIRED = new RegExp(`^${lotNumberRequiredMessage('(.+)')}$`);
/** The refusals a count answers to the person (the rest go to the error page). */
const COUNT_REFUSALS = [400, 404, 409, 422];

type Refusal = Extract<Attempt<unknown>, { ok: false }>;
const refusalMessage = (refusal: Refusal): string =>
  Object.keys(refusal.errors).length > 0
    ? Object.entries(refusal.errors)
        .map(([field, message]) => `${field === 'quantity' ? 'Quantity' : field} ${message}`)
        .join('; ')
    : refusal.message;

/** "+3", "−2", "0"; nothing for a missing one. */
const signedQuantity = (value: number | string | null | undefined): string => {
  if (value === null || value === undefined || value === '') return '';
  const d = new D(value);
  return d.gt(0) ? `+${formatQuantity(d.toString())}` : d.lt(0) ? `−${formatQuantity(d.abs().toString())}` : '0';
};
const signedMoney = (value: string | number | null | undefined): string => {
  if (value === null || value === undefined || value === '') return '';
  const d = new D(value);
  return d.gt(0) ? `+${formatMoney(d.toString())}` : d.lt(0) ? `−${formatMoney(d.abs().toString())}` : formatMoney('0');
};
const signClass = (value: number | string | null | undefined): string => {
  if (value === null || value === undefined || value === '') return '';
  const d = new D(value);
  return d.gt(0) ? 'gain' : d.lt(0) ? 'loss' : '';
};
const userName = (user: { firstName: string; lastName: string; email: string } | null | undefined): string =>
  user ? `${user.firstName} ${user.lastName}`.trim() || user.email : 'Someone';

/** "3 counted", or "not counted" once no scan of the line is left. */
const countedText = (counted: number | null) =>
  counted === null ? 'not counted' : `${formatQuantity(counted)} counted`;

const VIEW_HELPERS = {
  countedText,
  signedQuantity,
  signedMoney,
  signClass,
  userName,
  statusLabels: STATUS_LABELS,
  takesCounts,
};

function scopeLabel(scope: StocktakeScope, categoryNames: Map<number, string>): string {
  if ('all' in scope) return 'Every active item';
  if ('categoryIds' in scope)
    return `${scope.categoryIds.length === 1 ? 'Category' : 'Categories'} ${scope.categoryIds
      .map((id) => categoryNames.get(id) ?? `#${id}`)
      .join(', ')}`;
  return `${scope.itemIds.length} ${scope.itemIds.length === 1 ? 'item' : 'items'}`;
}

/** The New stocktake form as typed. */
type NewForm = {
  values: { name: string; scope: string; categoryIds: string[]; codes: string; blind: boolean };
  errors: FieldErrors;
  message: string | null;
};

/** The codes of the "These items" box: one a line (commas and tabs also part them, as a pasted column does). */
const codesOf = (typed: string) => [
  ...new Set(
    typed
      .split(/[\r\n,\t]+/)
      .map((code) => code.trim())
      .filter(Boolean),
  ),
];

/** The API names scope errors by their path (scope.categoryIds); the form by its field. */
function formErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors).map(([field, message]) => [
      field.startsWith('scope.categoryIds') ? 'categoryIds' : field.startsWith('scope.itemIds') ? 'codes' : field,
      message,
    ]),
  );
}

export function stocktakesPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const stocktakes = stocktakesService(db);
  const categories = categoriesService(db);

  pages.use('/stocktakes', (req, res, next) => {
    Object.assign(res.locals, ASSETS, VIEW_HELPERS);
    // the review, post and cancel links: the policy the API's guards keep
    res.locals.runsStocktakes = req.user !== undefined && managesStocktakes(req.user);
    next();
  });

  /** The items of the codes typed, through the one code lookup; the codes no item answers to. */
  async function itemIdsForCodes(codes: string[]) {
    const itemIds: number[] = [];
    const unknown: string[] = [];
    for (const code of codes) {
      const found = await attempt(() => stocktakes.itemOfCount({ code, quantity: '0', mode: 'add' }), [404]);
      if (found.ok) itemIds.push(found.value);
      else unknown.push(code);
    }
    return { itemIds: [...new Set(itemIds)], unknown };
  }

  const categoryNames = async () => new Map((await categories.list()).map((c) => [c.id, c.name]));

  // ---- the list ----------------------------------------------------------------------------

  pages.get('/stocktakes', { access: 'user', query: StocktakeListQuery }, async (req, res) => {
    const query = req.input.query;
    const manager = managesStocktakes(currentUser(req));
    const [page, names, suggestions] = await Promise.all([
      stocktakes.list(query),
      categoryNames(),
      manager ? stocktakes.suggestions({ days: SUGGESTION_DAYS, limit: SUGGESTION_LIMIT }) : [],
    ]);
    const listed = presentStocktakePage(page.rows, query.page, query.limit, page.total);
    const href = (n: number) => `/stocktakes?page=${n}`;
    res.render('stocktakes/index', {
      title: 'Stocktakes',
      stocktakes: listed.stocktakes.map((stocktake) => ({
        ...stocktake,
        scopeLabel: scopeLabel(stocktake.scope, names),
        createdByName: userName(stocktake.createdBy),
        // the review is a manager's; anyone else counts (a closed stocktake's count page says so)
        href: manager ? `/stocktakes/${stocktake.id}` : `/stocktakes/${stocktake.id}/count`,
      })),
      pagination: {
        ...listed.pagination,
        previous: query.page > 1 ? href(query.page - 1) : null,
        next: query.page < listed.pagination.totalPages ? href(query.page + 1) : null,
      },
      suggestions: presentSuggestions(SUGGESTION_DAYS, suggestions).items,
      suggestionDays: SUGGESTION_DAYS,
    });
  });

  // ---- a new stocktake ----------------------------------------------------------------------

  async function renderNew(res: Response, form: NewForm, status = 200) {
    res.status(status).render('stocktakes/new', { title: 'New stocktake', form, categories: await categories.list() });
  }

  pages.get('/stocktakes/new', { access: STOCKTAKE_MANAGERS }, (_req, res) =>
    renderNew(res, {
      values: { name: '', scope: 'all', categoryIds: [], codes: '', blind: false },
      errors: {},
      message: null,
    }),
  );

  pages.post(
    '/stocktakes',
    {
      access: STOCKTAKE_MANAGERS,
      form: CreateStocktake,
      // the scope as chosen: every item, categories, or the items the typed codes name (found first)
      fromForm: (body, _req, scope: unknown) => ({
        name: textField(body.name).trim() || null,
        scope,
        blind: checked(body.blind),
      }),
    },
    async (req, res) => {
      const values: NewForm['values'] = {
        name: textField(req.body.name),
        scope: textField(req.body.scope),
        categoryIds: repeatedField(req.body.categoryIds),
        codes: textField(req.body.codes),
        blind: checked(req.body.blind),
      };
      const created = await attempt(async () => {
        let scope: unknown;
        if (values.scope === 'all') scope = { all: true };
        else if (values.scope === 'categories') {
          if (values.categoryIds.length === 0)
            throw BadRequest('Validation failed', { errors: [{ field: 'categoryIds', message: 'choose a category' }] });
          scope = { categoryIds: values.categoryIds };
        } else if (values.scope === 'items') {
          const codes = codesOf(values.codes);
          if (codes.length === 0)
            throw BadRequest('Validation failed', {
              errors: [{ field: 'codes', message: 'type at least one SKU or barcode' }],
            });
          const { itemIds, unknown } = await itemIdsForCodes(codes);
          if (unknown.length > 0)
            throw BadRequest('Validation failed', {
              errors: [{ field: 'codes', message: unknown.map(unknownCodeMessage).join('; ') }],
            });
          scope = { itemIds };
        } else {
          throw BadRequest('Validation failed', { errors: [{ field: 'scope', message: 'choose what to count' }] });
        }
        return (await stocktakes.create(req.input.formWith(scope), actorOf(req))).stocktake;
      });
      if (!created.ok)
        return renderNew(res, { values, errors: formErrors(created.errors), message: created.message }, created.status);
      flash(req, `Stocktake ${created.value.reference} started: scan to count`);
      res.redirect(303, `/stocktakes/${created.value.id}/count`);
    },
  );

  // ---- the count page (anyone signed in) ------------------------------------------------------

  /** What this person sees of a stocktake's expected stock and variances: nothing below manager on a blind one. */
  const visibility = (req: Request, blind: boolean) => ({ expected: seesExpected(currentUser(req), blind) });

  type PresentedCount = ReturnType<typeof presentCount>;
  /** The last-scan panel: the scan, the line's count after it, and its expected stock where this person may see it. */
  const lastScanOf = (count: PresentedCount, expected: number | null) => ({
    countId: count.id,
    name: count.name,
    sku: count.sku,
    lotNumber: count.lotNumber,
    counted: count.counted,
    quantity: count.quantity,
    expected,
  });

  async function countView(
    req: Request,
    id: number,
    alert: string | null = null,
    askLot: { code: string; sku: string } | null = null,
  ) {
    const user = currentUser(req);
    const [head, counts, names] = await Promise.all([
      stocktakes.readRow(id),
      // this person's own scans: with ten people counting, each sees and undoes their own
      stocktakes.counts(id, { limit: SCANS_SHOWN, countedBy: user.id }),
      categoryNames(),
    ]);
    const stocktake = presentStocktakeSummary(head);
    const own = counts.map(presentCount);
    const last = own.find((count) => !count.undoneAt && count.mode === 'add');
    return {
      title: `Count ${stocktake.reference}`,
      description: 'Count a stocktake by scanner: each scan counts one more.',
      stocktake,
      scopeLabel: scopeLabel(stocktake.scope, names),
      progress: { counted: stocktake.linesCounted, total: stocktake.linesTotal },
      counts: own,
      last: last ? lastScanOf(last, null) : null,
      stocktakeId: id,
      alert,
      askLot,
    };
  }

  pages.get('/stocktakes/:id/count', { access: 'user', params: StocktakeParams }, async (req, res) => {
    const { id } = req.input.params;
    res.render('stocktakes/count', await countView(req, id));
  });

  type CountAnswer = {
    count?: PresentedCount;
    expected?: number | null;
    /** the scan undone, and its line's count now (null: no scan of it left, uncounted again) */
    undone?: PresentedCount & { lineCounted: number | null };
    /** lines counted of all, when the answer has read them already */
    progress?: { counted: number; total: number };
  };

  /** A count's answer: the scan list's entry and the parts it changes (for the page's script), or the page again. */
  async function answerCount(
    req: Request,
    res: Response,
    { id, result, code }: { id: number; result: Attempt<CountAnswer>; code: string },
  ) {
    if (!result.ok) {
      const message = refusalMessage(result);
      // a code no item has is a refused scan (422), as at the counter; an unknown stocktake is still the 404 page
      const status = result.status === 404 ? 422 : result.status;
      // a tracked item scanned without its lot (a SKU, a plain barcode): the answer asks for the lot
      const lotOf = status === 422 ? LOT_REQUIRED.exec(message) : null;
      const askLot = lotOf ? { code, sku: lotOf[1] } : null;
      if (!wantsPartial(req))
        return res.status(status).render('stocktakes/count', await countView(req, id, message, askLot));
      return res.status(status).render('stocktakes/_scan', {
        refused: { code, message, askLot },
        undone: null,
        count: null,
        progress: await progressOf(id),
        stocktakeId: id,
      });
    }
    const { count, undone, expected } = result.value;
    if (!wantsPartial(req)) {
      flash(
        req,
        count
          ? `${count.name}: ${formatQuantity(count.counted)} counted`
          : `Undone: ${undone!.name}, ${countedText(undone!.lineCounted)}`,
      );
      return res.redirect(303, `/stocktakes/${id}/count`);
    }
    res.render('stocktakes/_scan', {
      refused: null,
      count: count ?? null,
      undone: undone ?? null,
      progress: result.value.progress ?? (await progressOf(id)),
      ...(count ? { last: lastScanOf(count, expected ?? null) } : {}),
      stocktakeId: id,
    });
  }

  async function progressOf(id: number) {
    const head = presentStocktakeSummary(await stocktakes.readRow(id));
    return { counted: head.linesCounted, total: head.linesTotal };
  }

  /** Records a count; answers the scan and, where this person may see it, the line's expected stock. */
  async function recordCount(req: Request, id: number, body: CountBody): Promise<CountAnswer> {
    const result = await stocktakes.count(id, body, actorOf(req));
    const head = presentStocktakeSummary(await stocktakes.readRow(id));
    const presented = presentCountResult(result, visibility(req, head.blind));
    return {
      count: presented.count,
      expected: presented.expected,
      progress: { counted: head.linesCounted, total: head.linesTotal },
    };
  }

  async function undo(req: Request, id: number, countId: number): Promise<CountAnswer> {
    const { line, count } = await stocktakes.undoCount(id, countId, actorOf(req), scanRightsOf(currentUser(req)));
    return {
      undone: { ...presentCount(count), lineCounted: line && line.counted !== null ? Number(line.counted) : null },
    };
  }

  pages.post(
    '/stocktakes/:id/count',
    {
      access: 'user',
      params: StocktakeParams,
      form: CountBody,
      fromForm: (body) => ({
        code: textField(body.code).trim(),
        quantity: 1,
        mode: 'add',
        // the lot a tracked item's scan was asked for (a GS1 scan carries its own)
        ...(textField(body.lotNumber).trim() ? { lotNumber: textField(body.lotNumber).trim() } : {}),
        ...(textField(body.expiresOn).trim() ? { expiresOn: textField(body.expiresOn).trim() } : {}),
      }),
    },
    async (req, res) => {
      const { id } = req.input.params;
      const code = textField(req.body.code).trim();
      const result = await attempt(() => recordCount(req, id, req.input.form), COUNT_REFUSALS);
      await answerCount(req, res, { id, result, code });
    },
  );

  pages.post(
    '/stocktakes/:id/counts/:countId/undo',
    { access: 'user', params: StocktakeCountParams },
    async (req, res) => {
      const { id, countId } = req.input.params;
      const result = await attempt(() => undo(req, id, countId), COUNT_REFUSALS);
      await answerCount(req, res, { id, result, code: 'Undo' });
    },
  );

  // "Quantity of this scan" (a box of 24 scanned once): the scan is undone and the quantity typed
  // counted in its place, as a new scan of the same item, in one transaction (a refusal changes nothing).
  pages.post(
    '/stocktakes/:id/counts/:countId/quantity',
    {
      access: 'user',
      params: StocktakeCountParams,
      form: ChangeCountBody,
      fromForm: (body) => ({ quantity: textField(body.quantity).trim() }),
    },
    async (req, res) => {
      const { id, countId } = req.input.params;
      const typed = textField(req.body.quantity).trim();
      const result = await attempt(async (): Promise<CountAnswer> => {
        const { quantity } = req.input.form;
        const { line, count, undone, blind } = await stocktakes.changeCount(
          id,
          { countId, quantity },
          actorOf(req),
          scanRightsOf(currentUser(req)),
        );
        if (!count) {
          return {
            undone: {
              ...presentCount(undone!),
              lineCounted: line && line.counted !== null ? Number(line.counted) : null,
            },
          };
        }
        const expected = line ? presentStocktakeLine(line, visibility(req, blind)).expected : null;
        return { count: presentCount(count), expected };
      }, COUNT_REFUSALS);
      await answerCount(req, res, { id, result, code: typed });
    },
  );

  // ---- the review (managers) --------------------------------------------------------------------

  const lineFilterOf = (value: unknown): ReviewFilter =>
    typeof value === 'string' && Object.hasOwn(FILTER_LABELS, value) ? (value as ReviewFilter) : 'all';

  /** How many lines a filter shows, from the stocktake's totals. */
  const linesShown = (totals: StocktakeTotals, filter: ReviewFilter) =>
    filter === 'variance'
      ? totals.itemsWithVariance
      : filter === 'uncounted'
        ? totals.linesTotal - totals.linesCounted
        : totals.linesTotal;

  async function renderReview(
    req: Request,
    res: Response,
    {
      id,
      filter,
      page: pageAsked,
      recount = null,
      status = 200,
    }: {
      id: number;
      filter: ReviewFilter;
      page: number;
      recount?: { itemId: number; lotNumber?: string | null; value: string; error: string; message: string } | null;
      status?: number;
    },
  ) {
    // the head and its totals summed in SQL, and one page of lines sorted there: a 50,000-line count is never read whole
    const [summary, names] = await Promise.all([stocktakes.summary(id), categoryNames()]);
    const total = linesShown(summary.totals, filter);
    const totalPages = Math.max(1, Math.ceil(total / REVIEW_PAGE_LINES));
    const page = Math.min(pageAsked, totalPages);
    const { rows } = await stocktakes.lines(id, { page, limit: REVIEW_PAGE_LINES, filter });
    const presented = presentStocktake({ ...summary, lines: rows }, FULL_VIEW);
    const href = (n: number) => `/stocktakes/${id}?show=${filter}&page=${n}`;
    res.status(status).render('stocktakes/show', {
      title: `Stocktake ${presented.reference}`,
      stocktake: presented,
      totals: presented.totals,
      lines: presented.lines,
      scopeLabel: scopeLabel(presented.scope, names),
      filter,
      filterLabels: FILTER_LABELS,
      recount,
      pagination: {
        page,
        totalPages,
        total,
        previous: page > 1 ? href(page - 1) : null,
        next: page < totalPages ? href(page + 1) : null,
      },
    });
  }

  pages.get('/stocktakes/:id', { access: STOCKTAKE_MANAGERS, params: StocktakeParams }, async (req, res) => {
    const { id } = req.input.params;
    const page = Math.max(1, Number.parseInt(textField(req.query.page), 10) || 1);
    await renderReview(req, res, { id, filter: lineFilterOf(req.query.show), page });
  });

  pages.post(
    '/stocktakes/:id/lines/:itemId/recount',
    {
      access: STOCKTAKE_MANAGERS,
      params: RecountParams,
      form: CountBody,
      fromForm: (body, req) => ({
        itemId: req.params.itemId,
        quantity: textField(body.counted).trim(),
        mode: 'set',
        // a lot-tracked item's line of one lot
        ...(textField(body.lotNumber).trim() ? { lotNumber: textField(body.lotNumber).trim() } : {}),
      }),
    },
    async (req, res) => {
      const { id, itemId } = req.input.params;
      const filter = lineFilterOf(req.body.show);
      const page = Math.max(1, Number.parseInt(textField(req.body.page), 10) || 1);
      const typed = textField(req.body.counted).trim();
      const result = await attempt(async () =>
        presentCountResult(await stocktakes.count(id, req.input.form, actorOf(req)), FULL_VIEW),
      );
      if (!result.ok) {
        const error = result.errors.quantity ?? refusalMessage(result);
        return renderReview(req, res, {
          id,
          filter,
          page,
          recount: {
            itemId,
            lotNumber: req.input.form.lotNumber ?? null,
            value: typed,
            error,
            message: `The recount was not recorded: ${error}`,
          },
          status: result.status,
        });
      }
      flash(req, `${result.value.name}: recounted ${formatQuantity(result.value.counted)}`);
      res.redirect(303, `/stocktakes/${id}?show=${filter}&page=${page}#line-${itemId}`);
    },
  );

  // ---- post and cancel, each after a confirmation page ----------------------------------------------

  async function renderConfirm(
    res: Response,
    id: number,
    {
      view,
      message = null,
      choice = 'ignore',
      status = 200,
    }: { view: 'post' | 'cancel'; message?: string | null; choice?: string; status?: number },
  ) {
    // the totals only: summed in SQL, no line read
    const presented = presentStocktake({ ...(await stocktakes.summary(id)), lines: [] }, FULL_VIEW);
    if (!takesCounts(presented.status) && status === 200) return res.redirect(303, `/stocktakes/${id}`);
    res.status(status).render(`stocktakes/${view}`, {
      title: `${view === 'post' ? 'Post' : 'Cancel'} stocktake ${presented.reference}`,
      stocktake: presented,
      totals: presented.totals,
      message,
      choice,
    });
  }

  pages.get('/stocktakes/:id/post', { access: STOCKTAKE_MANAGERS, params: StocktakeParams }, async (req, res) => {
    const { id } = req.input.params;
    await renderConfirm(res, id, { view: 'post' });
  });

  pages.post(
    '/stocktakes/:id/post',
    {
      access: STOCKTAKE_MANAGERS,
      params: StocktakeParams,
      form: PostStocktake,
      fromForm: (body) => ({ uncounted: textField(body.uncounted) || 'ignore' }),
    },
    async (req, res) => {
      const { id } = req.input.params;
      const choice = textField(req.body.uncounted) || 'ignore';
      const result = await attempt(() => stocktakes.post(id, req.input.form, actorOf(req)));
      if (!result.ok)
        return renderConfirm(res, id, { view: 'post', message: refusalMessage(result), choice, status: result.status });
      const posted = result.value;
      flash(
        req,
        `Stocktake ${posted.reference} posted: ${posted.itemsCounted} counted, ${posted.itemsAdjusted} adjusted, variance value ${signedMoney(posted.varianceValue)}`,
      );
      res.redirect(303, `/stocktakes/${id}`);
    },
  );

  pages.get('/stocktakes/:id/cancel', { access: STOCKTAKE_MANAGERS, params: StocktakeParams }, async (req, res) => {
    const { id } = req.input.params;
    await renderConfirm(res, id, { view: 'cancel' });
  });

  pages.post('/stocktakes/:id/cancel', { access: STOCKTAKE_MANAGERS, params: StocktakeParams }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(() => stocktakes.cancel(id, actorOf(req)));
    if (!result.ok)
      return renderConfirm(res, id, { view: 'cancel', message: refusalMessage(result), status: result.status });
    flash(req, 'Stocktake cancelled');
    res.redirect(303, `/stocktakes/${id}`);
  });

  return pages.router;
}
