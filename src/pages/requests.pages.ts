import type { Response, Router } from 'express';
import type { z } from 'zod';
import type { Deps } from '../deps';
import type { Db } from '../db/knex';
import { currentUser, hasRole, isStaff } from '../auth/guards';
import type { Availability } from '../modules/catalogue/catalogue.schemas';
import { audienceOf, presentRequest, SHORT_REASON_TEXT } from '../modules/requests/requests.present';
import {
  CancelBody,
  CollectBody,
  DecisionBody,
  FulfilBody,
  RequestIdParams,
  RequestQuery,
  type RequestStatus,
} from '../modules/requests/requests.schemas';
import { actorOf } from '../modules/audit/audit.actor';
import { presentCatalogueChargeCode } from '../modules/catalogue/catalogue.present';
import { catalogueService } from '../modules/catalogue/catalogue.service';
import { presentSale } from '../modules/sales/sales.present';
import {
  canMove,
  mayApproveRestricted,
  mayCancel,
  mayDecide,
  requestsService,
  restrictedApprovalPending,
  RESTRICTED_APPROVERS,
  type RequestActor,
} from '../modules/requests/requests.service';
import { attempt, filledIn, flash, formState, repeatedField, textField, type ReturnedForm } from './forms';
import { PageRouter, type PageRequest } from './page-route';

/** The catalogue's and the requests' stylesheet and script. */
export const ASSETS = { stylesheets: ['/assets/css/requests.css'], scripts: ['/assets/js/requests.js'] };

export const STATUS_LABELS: Record<RequestStatus, string> = {
  submitted: 'Submitted',
  awaiting_approval: 'Awaiting approval',
  approved: 'Approved',
  rejected: 'Rejected',
  ready: 'Ready to collect',
  collected: 'Collected',
  cancelled: 'Cancelled',
};
/** The states the staff's queue shows, in the order work moves through them. */
const QUEUE_STATES: RequestStatus[] = ['submitted', 'awaiting_approval', 'approved', 'ready'];
/** Issue 43: the queue's filter of the open requests whose restricted substances wait for a manager (the API's restrictedToApprove). */
const RESTRICTED = 'restricted';
const RESTRICTED_LABEL = 'Restricted: to approve';
/** What the queue shows: one state, or the restricted requests waiting for a manager. */
type QueueView = RequestStatus | typeof RESTRICTED;
/** What staff pick from: a request to fulfil. */
const PICKABLE: RequestStatus[] = ['submitted', 'approved'];
/** The queue's states that are the stores' work (awaiting approval is the approver's). */
const STORES_WORK: RequestStatus[] = ['submitted', 'approved', 'ready'];
/** Rows of the queue and of the person's own list. */
const LIST_LIMIT = 100;
/** The latest sales charged to the person that the requests page lists. */
const SALES_SHOWN = 20;

type Person = { firstName?: string | null; lastName?: string | null; email?: string | null } | null | undefined;
const personName = (person: Person): string =>
  person ? [person.firstName, person.lastName].filter(Boolean).join(' ') || (person.email ?? '') : '';

/** What the request templates use beside the request itself. */
/** An item's availability as the pages say it: a word, never the count (the catalogue and a request's lines). */
const AVAILABILITY = { in_stock: 'In stock', low: 'Low', out: 'Out of stock' } as const satisfies Record<
  Availability,
  string
>;

export const REQUEST_VIEW_HELPERS = { STATUS_LABELS, SHORT_REASON_TEXT, AVAILABILITY, personName };

/** The person's own latest requests (the catalogue, a requester's home, the requests page). */
export async function myRequests(db: Db, user: Express.User, limit: number) {
  const { records } = await requestsService(db).list(user, { mine: true, page: 1, limit });
  return records.map((record) => presentRequest(record, audienceOf(user)));
}

/**
 * The view the queue opens on: the first of the stores' work that has requests waiting (submitted,
 * approved, ready), else the first state with any (awaiting approval), else submitted. For a manager
 * or admin, restricted requests waiting for their approval come first (issue 43): nothing else
 * unblocks their fulfilment. A user cannot approve them: they stay under their states.
 */
function firstWithWork(counts: Record<string, number>, approvesRestricted: boolean): QueueView {
  if (approvesRestricted && (counts[RESTRICTED] ?? 0) > 0) return RESTRICTED;
  const waiting = (states: RequestStatus[]) => states.find((status) => (counts[status] ?? 0) > 0);
  return waiting(STORES_WORK) ?? waiting(QUEUE_STATES) ?? 'submitted';
}

type RequestFormName = 'fulfil' | 'approve' | 'collect' | 'restricted';

/** A request's page and its actions: the request's id in the path. */
type RequestPage = PageRequest<{ readonly params: z.output<typeof RequestIdParams> }>;

/** The approve or reject form's comment as the API's body: none when left empty. */
const typedDecision = (body: Record<string, unknown>) => filledIn({ comment: textField(body.comment).trim() });

/** Each line's quantity to hand over as the API's items; a line set to 0 is left out. */
const handedOutLines = (body: Record<string, unknown>) => {
  const quantities = repeatedField(body.quantity).map((quantity) => quantity.trim());
  return repeatedField(body.itemId)
    .map((itemId, index) => ({ itemId, quantity: quantities[index] ?? '' }))
    .filter((line) => !/^0*(\.0*)?$/.test(line.quantity) || line.quantity === '');
};

/** `/requests`: the person's own requests, the staff's queue and picking list, the approver's decisions; `/requests/:id`, the emailed link. */
export function requestsPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const requests = requestsService(db);
  const catalogue = catalogueService(db);

  /**
   * How many requests are in each of the queue's states, and (issue 43) how many restricted ones wait for
   * a manager: a count each, the queue's index reads them.
   */
  async function queueCounts(user: Express.User): Promise<Record<string, number>> {
    const totals = await Promise.all([
      ...QUEUE_STATES.map(async (status) => [status, (await requests.list(user, { status, page: 1, limit: 1 })).total]),
      (async () => [RESTRICTED, (await requests.list(user, { restrictedToApprove: true, page: 1, limit: 1 })).total])(),
    ]);
    return Object.fromEntries(totals);
  }

  pages.get('/requests', { access: 'requester', query: RequestQuery, fromQuery: filledIn }, async (req, res) => {
    const user = currentUser(req);
    const staff = isStaff(user);
    const query = req.input.query;
    const counts = staff ? await queueCounts(user) : null;
    const state: QueueView = query.restrictedToApprove
      ? RESTRICTED
      : query.status && QUEUE_STATES.includes(query.status)
        ? query.status
        : firstWithWork(counts ?? {}, hasRole(user, RESTRICTED_APPROVERS));
    const restrictedView = state === RESTRICTED;
    const [mine, approvals, queueRows, codes, sales] = await Promise.all([
      myRequests(db, user, LIST_LIMIT),
      requests.list(user, { toApprove: true, page: 1, limit: LIST_LIMIT }),
      staff
        ? requests.list(
            user,
            restrictedView
              ? { restrictedToApprove: true, page: 1, limit: LIST_LIMIT }
              : { status: state, page: 1, limit: LIST_LIMIT },
          )
        : null,
      catalogue.chargeCodesOf(user.email),
      requests.salesOf(user, 1, SALES_SHOWN),
    ]);
    res.render('requests/index', {
      ...ASSETS,
      ...REQUEST_VIEW_HELPERS,
      title: staff ? 'Requests' : 'My requests',
      description: 'Requests for items from the stores: their state, approval, fulfilment and collection.',
      mine,
      approvals: approvals.records.map((record) => presentRequest(record, audienceOf(user))),
      // the codes the person is an authorised user of, with their spending, and the sales their requests made
      chargeCodes: codes.map((record) => presentCatalogueChargeCode(record)),
      sales: sales.sales.map(presentSale),
      queue:
        staff && queueRows && counts
          ? {
              label: restrictedView ? RESTRICTED_LABEL : STATUS_LABELS[state],
              caption: restrictedView
                ? 'Requests holding a restricted substance that wait for a manager’s approval, oldest first'
                : `Requests: ${STATUS_LABELS[state]}, oldest first`,
              empty: restrictedView
                ? 'No request holding a restricted substance waits for a manager’s approval.'
                : `No requests are ${STATUS_LABELS[state].toLowerCase()}.`,
              rows: queueRows.records.map((record) => presentRequest(record, 'staff')),
              pickable: !restrictedView && PICKABLE.includes(state) && queueRows.records.length > 0,
              states: [
                ...QUEUE_STATES.map((status) => ({
                  href: `/requests?status=${status}`,
                  label: STATUS_LABELS[status],
                  count: counts[status] ?? 0,
                  current: status === state,
                })),
                // issue 43: a filter across the open states, the managers' queue
                {
                  href: '/requests?restrictedToApprove=true',
                  label: RESTRICTED_LABEL,
                  count: counts[RESTRICTED] ?? 0,
                  current: restrictedView,
                },
              ],
            }
          : null,
    });
  });

  pages.get('/requests/picking-list', { access: 'user' }, async (req, res) => {
    const user = currentUser(req);
    const lists = await Promise.all(
      PICKABLE.map((status) => requests.list(user, { status, page: 1, limit: LIST_LIMIT })),
    );
    const records = lists
      .flatMap((list) => list.records)
      .sort((a, b) => a.request.created_at.getTime() - b.request.created_at.getTime());
    // issue 43: a request whose restricted substances wait for a manager is listed, marked, so that
    // nobody picks what cannot be handed out yet; its restricted lines are marked too
    const restrictedItemIds = await requests.restrictedItemIds(
      records.filter((record) => record.request.restricted_approval_required),
    );
    const toPick = records.map((record) => ({
      request: presentRequest(record, 'staff'),
      restrictedPending: restrictedApprovalPending(record),
    }));
    res.render('requests/picking-list', {
      ...ASSETS,
      ...REQUEST_VIEW_HELPERS,
      title: 'Picking list',
      toPick,
      restrictedItemIds,
      printedAt: new Date(),
    });
  });

  async function renderRequest(req: RequestPage, res: Response, returned: ReturnedForm<RequestFormName> | null = null) {
    const user = currentUser(req);
    const { id } = req.input.params;
    const record = await requests.get(user, id);
    const request = presentRequest(record, audienceOf(user));
    const staff = isStaff(user);
    const restrictedPending = restrictedApprovalPending(record);
    const mayApprove = mayApproveRestricted(user, record);
    res.status(returned?.status ?? 200).render('requests/show', {
      ...ASSETS,
      ...REQUEST_VIEW_HELPERS,
      title: `Request ${request.reference}`,
      request,
      mayWork: staff,
      mayCancel: canMove(record.request.status, 'cancel') && mayCancel(user, record),
      fulfilForm: staff && canMove(record.request.status, 'fulfil') ? formState(returned, 'fulfil', {}) : null,
      approveForm:
        canMove(record.request.status, 'approve') && mayDecide(user, record)
          ? formState(returned, 'approve', { comment: '' })
          : null,
      // issue 43: the restricted lines marked, the manager's approval, and fulfilment waiting for it
      restrictedItemIds: request.restrictedApproval.required ? await requests.restrictedItemIds([record]) : new Set(),
      restrictedPending,
      restrictedForm:
        mayApprove || returned?.form === 'restricted' ? formState(returned, 'restricted', { comment: '' }) : null,
      mayApproveRestricted: mayApprove,
      collectForm:
        staff && canMove(record.request.status, 'collect')
          ? formState(returned, 'collect', { deliveredTo: personName(request.requestedBy) })
          : null,
    });
  }

  pages.get('/requests/:id', { access: 'requester', params: RequestIdParams }, (req, res) => renderRequest(req, res));

  /**
   * A request's action: post/redirect/get to its page; what the person can fix comes back on the page at 422 or 409,
   * in its `form` (an action without a form, such as cancel, flashes the refusal instead).
   */
  async function act(
    req: RequestPage,
    res: Response,
    {
      form,
      action,
      doneMessage,
      fieldOf = (field) => field,
      formStatuses,
    }: {
      form?: RequestFormName;
      action: (id: number, who: RequestActor) => Promise<unknown>;
      doneMessage: string;
      fieldOf?: (field: string) => string;
      /** The refusals shown on the page in the form (attempt's default: 400, 409, 422). */
      formStatuses?: number[];
    },
  ) {
    const { id } = req.input.params;
    const values = { ...req.body } as Record<string, unknown>;
    const result = await attempt(() => action(id, { user: currentUser(req), actor: actorOf(req) }), formStatuses);
    if (!result.ok) {
      if (!form) {
        flash(req, result.message);
        return res.redirect(303, `/requests/${id}`);
      }
      const errors = Object.fromEntries(
        Object.entries(result.errors).map(([field, message]) => [fieldOf(field), message]),
      );
      return renderRequest(req, res, { form, status: result.status, message: result.message, errors, values });
    }
    flash(req, doneMessage);
    res.redirect(303, `/requests/${id}`);
  }

  pages.post(
    '/requests/:id/cancel',
    { access: 'requester', params: RequestIdParams, form: CancelBody, fromForm: () => ({}) },
    (req, res) =>
      act(req, res, {
        action: (id, who) => requests.cancel(who, id, req.input.form),
        doneMessage: 'Request cancelled',
      }),
  );

  const decision = {
    access: 'requester',
    params: RequestIdParams,
    form: DecisionBody,
    fromForm: typedDecision,
  } as const;

  pages.post('/requests/:id/approve', decision, (req, res) =>
    act(req, res, {
      form: 'approve',
      action: (id, who) => requests.approve(who, id, req.input.form),
      doneMessage: 'Request approved',
    }),
  );

  pages.post('/requests/:id/reject', decision, (req, res) =>
    act(req, res, {
      form: 'approve',
      action: (id, who) => requests.reject(who, id, req.input.form),
      doneMessage: 'Request rejected',
    }),
  );

  // Issue 43: a manager's approval of the restricted substances, the API's service; its 403 and 409 said on the page as the API words them.
  pages.post('/requests/:id/approve-restricted', decision, (req, res) =>
    act(req, res, {
      form: 'restricted',
      action: (id, who) => requests.approveRestricted(who, id, req.input.form),
      doneMessage: 'Restricted substances approved',
      formStatuses: [400, 403, 409, 422],
    }),
  );

  // Each line's quantity to hand over (the requested one to start with); a line set to 0 is left out, as the API's.
  pages.post(
    '/requests/:id/fulfil',
    {
      access: 'user',
      params: RequestIdParams,
      form: FulfilBody,
      fromForm: (body) => ({ items: handedOutLines(body) }),
    },
    (req, res) => {
      const itemIds = repeatedField(req.body.itemId);
      const quantities = repeatedField(req.body.quantity).map((quantity) => quantity.trim());
      const handedOut = handedOutLines(req.body);
      // each line's field is named by its item on the page, so a refusal shows what was typed beside it
      for (const [index, itemId] of itemIds.entries()) req.body[`quantity-${itemId}`] = quantities[index];
      const fieldOf = (field: string) => {
        const line = /^items\.(\d+)\.quantity$/.exec(field);
        return line ? `quantity-${handedOut[Number(line[1])]?.itemId}` : field;
      };
      return act(req, res, {
        form: 'fulfil',
        action: (id, who) => requests.fulfil(who, id, req.input.form),
        doneMessage: 'Request fulfilled: ready to collect',
        fieldOf,
      });
    },
  );

  pages.post(
    '/requests/:id/collect',
    {
      access: 'user',
      params: RequestIdParams,
      form: CollectBody,
      fromForm: (body) => filledIn({ deliveredTo: textField(body.deliveredTo).trim() }),
    },
    (req, res) =>
      act(req, res, {
        form: 'collect',
        action: (id, who) => requests.collect(who, id, req.input.form),
        doneMessage: 'Request collected',
      }),
  );

  return pages.router;
}
