import type { Request, Router } from 'express';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { presentListedLot, presentLotsPage } from '../modules/lot-control/lot-control.present';
import {
  LIST_STATUSES,
  LotIdParams,
  LotsQuery,
  QuarantineBody,
  WriteOffBody,
} from '../modules/lot-control/lot-control.schemas';
import {
  LOT_MANAGERS,
  lotActions,
  lotControlService,
  managesLots,
  type LotView,
} from '../modules/lot-control/lot-control.service';
import { actorOf } from '../modules/audit/audit.actor';
import { attempt, filledIn, flash, textField, type Attempt } from './forms';
import { PageRouter } from './page-route';

/** The list's tabs: every lot that needs a look, or one status of them. */
const STATUS_TABS: { value: (typeof LIST_STATUSES)[number] | ''; label: string }[] = [
  { value: '', label: 'All' },
  { value: 'expiring', label: 'Expiring' },
  { value: 'expired', label: 'Expired' },
  { value: 'quarantined', label: 'Quarantined' },
];

/**
 * Where a lot action's form goes back to: the lots list (with its tab and page) or the item's page
 * it was sent from; anything else is the list (a form field never sends a person off the site).
 */
function backTo(req: Request): string {
  const back = textField((req.body as Record<string, unknown> | undefined)?.back);
  return /^\/(lots|items\/\d+)(\?[\w=&]*)?(#[\w-]+)?$/.test(back) ? back : '/lots';
}

/** What a refused action says in the flash: the field's problem, or the service's message. */
const refusal = (action: string, result: Extract<Attempt<unknown>, { ok: false }>) =>
  result.errors.reason ? `${action}: the reason ${result.errors.reason}` : result.message;

const named = (lot: LotView) => `Lot ${lot.row.lot_number} of ${lot.item.sku}`;

/** /lots (issue 42): the lots expiring, expired or quarantined, and a manager's write-off, quarantine and release of one. */
export function lotsPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const lots = lotControlService(db);

  pages.use('/lots', (req, res, next) => {
    res.locals.stylesheets = ['/assets/css/items.css', '/assets/css/lots.css'];
    res.locals.scripts = ['/assets/js/lots.js'];
    next();
  });

  pages.get('/lots', { access: 'user', query: LotsQuery, fromQuery: (query) => filledIn(query) }, async (req, res) => {
    const query = req.input.query;
    const found = await lots.list(query);
    const listed = presentLotsPage(found, query.page, query.limit);
    const href = (page: number) => {
      const params = new URLSearchParams();
      if (query.status) params.set('status', query.status);
      if (query.itemId) params.set('itemId', String(query.itemId));
      if (query.limit !== 50) params.set('limit', String(query.limit));
      if (page > 1) params.set('page', String(page));
      const search = params.toString();
      return search ? `/lots?${search}` : '/lots';
    };
    const here = href(query.page);
    res.render('lots/index', {
      title: 'Lots',
      // each lot with what may be done with it now (the service's rule)
      lots: listed.lots.map((lot, i) => ({ ...lot, actions: lotActions(found.lots[i].row) })),
      status: query.status ?? '',
      tabs: STATUS_TABS.map((tab) => ({
        ...tab,
        href: tab.value ? `/lots?status=${tab.value}` : '/lots',
      })),
      back: here,
      managesLots: managesLots(currentUser(req)),
      pagination: {
        ...listed.pagination,
        previous: query.page > 1 ? href(query.page - 1) : null,
        next: query.page < listed.pagination.totalPages ? href(query.page + 1) : null,
      },
    });
  });

  pages.post(
    '/lots/:id/write-off',
    {
      access: LOT_MANAGERS,
      params: LotIdParams,
      form: WriteOffBody,
      fromForm: (body) => filledIn({ reason: textField(body.reason).trim() }),
    },
    async (req, res) => {
      const result = await attempt(() => lots.writeOff(req.input.params.id, req.input.form, actorOf(req)));
      if (!result.ok) flash(req, refusal('Not written off', result));
      else flash(req, `${named(result.value)} written off`);
      res.redirect(303, backTo(req));
    },
  );

  pages.post(
    '/lots/:id/quarantine',
    {
      access: LOT_MANAGERS,
      params: LotIdParams,
      form: QuarantineBody,
      fromForm: (body) => ({ reason: textField(body.reason) }),
    },
    async (req, res) => {
      const result = await attempt(() => lots.quarantine(req.input.params.id, req.input.form, actorOf(req)));
      if (!result.ok) flash(req, refusal('Not quarantined', result));
      else flash(req, `${named(result.value)} quarantined: ${presentListedLot(result.value).quarantineReason}`);
      res.redirect(303, backTo(req));
    },
  );

  pages.post('/lots/:id/release', { access: LOT_MANAGERS, params: LotIdParams }, async (req, res) => {
    const result = await attempt(() => lots.release(req.input.params.id, actorOf(req)));
    if (!result.ok) flash(req, result.message);
    else flash(req, `${named(result.value)} released`);
    res.redirect(303, backTo(req));
  });

  return pages.router;
}
