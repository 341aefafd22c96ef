import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { actorOf } from '../audit/audit.actor';
import { audienceOf, presentRequest, presentRequestPage } from './requests.present';
import {
  CancelBody,
  CollectBody,
  CreateRequest,
  DecisionBody,
  FulfilBody,
  MySalesQuery,
  RequestIdParams,
  RequestQuery,
  StockRequest,
  StockRequestPage,
} from './requests.schemas';
import { requestsService } from './requests.service';
import { SalesPage } from '../sales/sales.schemas';
import { presentSalesPage } from '../sales/sales.present';

/** Issue 33: requests against a charge code, their approval, fulfilment as a sale and collection. */
export function requestsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Requests');
  const requests = requestsService(db);
  const invalid = { description: 'Validation failed', schema: ValidationErrorBody };
  const notFound = {
    description: 'No such request, or one the person may not see (a requester sees their own and those they approve)',
    schema: MessageBody,
  };
  const illegal = (to: string) => ({
    description: `The request's state does not lead to ${to}: the message names both states`,
    schema: MessageBody,
  });
  const who = (req: Parameters<typeof actorOf>[0]) => ({ user: currentUser(req), actor: actorOf(req) });

  api.get(
    '/requests',
    {
      operationId: 'listRequests',
      summary: 'List requests (the queue, or mine)',
      description:
        'Oldest first (the queue). Staff (role user and above) see every request; anyone else only their own. ' +
        "Filters: status; mine=true, only the signed-in person's; toApprove=true, only those awaiting the signed-in person's approval " +
        "(their email is the code's approverEmail; an admin: every request awaiting approval); restrictedToApprove=true (issue 43), only the open " +
        "requests holding a restricted substance that await a manager's approval, not the person's own. page default 1, limit default 50 (max 200).",
      access: 'any-signed-in',
      query: RequestQuery,
      responses: { 200: { description: 'One page of requests', schema: StockRequestPage }, 400: invalid },
    },
    async (req, res) => {
      const query = req.input.query;
      const user = currentUser(req);
      res.json(presentRequestPage(await requests.list(user, query), query.page, query.limit, audienceOf(user)));
    },
  );

  api.get(
    '/requests/sales',
    {
      operationId: 'listMyRequestSales',
      summary: 'The sales charged to the signed-in person',
      description:
        "The sales that fulfilled the signed-in person's requests, newest first, with their lines (the shape of GET /api/sales). " +
        'page default 1, limit default 20 (max 100).',
      access: 'any-signed-in',
      query: MySalesQuery,
      responses: { 200: { description: 'Sales', schema: SalesPage }, 400: invalid },
    },
    async (req, res) => {
      const { page, limit } = req.input.query;
      res.json(presentSalesPage(await requests.salesOf(currentUser(req), page, limit), page, limit));
    },
  );

  api.post(
    '/requests',
    {
      operationId: 'createRequest',
      summary: 'Submit a request for items against a charge code',
      description:
        'Any signed-in person. Lines are priced from the items now (VAT applied); an item asked twice is one line. ' +
        'The charge code is checked as the counter checks it, with the same messages (unknown, expired, not yet valid, on hold, excluded category, ' +
        'and with the setting chargeCodes.requireAuthorisedUser on, the person must be one of its authorised users). ' +
        "A requester must always be one of the code's authorised users; for any code they are not authorised on, whether it exists, " +
        'is held or is unknown, they get 400 "You are not authorised on charge code \'<code>\'". ' +
        'A quantity over what the item has for sale (an item tracked by lot: its lots neither expired nor quarantined) is accepted ' +
        'and its line marked short. The reference is RQ-<YYYYMMDD>-<n>. ' +
        "Status submitted (the stores' request inbox, the setting requests.notifyEmails, is emailed that it is ready to fulfil), " +
        "or awaiting_approval when the total (VAT included) is over the code's approvalThreshold (the approver is emailed); the total is " +
        "counted with the requester's other open requests (submitted, awaiting_approval, approved) on the code of the last 24 hours " +
        '(setting requests.thresholdWindow: request, the request alone; day, the default; week, the last 7 days). ' +
        'Writes the request.submitted (and request.awaiting_approval) event.\n\n' +
        'Issue 43, after the charge-code checks: when an item (or its category) has coshhRequired, coshhReference is required ' +
        '(400 "A COSHH assessment reference is required for <SKU>", the first such line); it is carried to the sale. A request holding a ' +
        'restricted item has restrictedApproval.required: it is not fulfilled until a manager approved it (POST /api/requests/{id}/approve-restricted), ' +
        'on top of any charge-code approval.',
      access: 'any-signed-in',
      body: CreateRequest,
      responses: { 201: { description: 'Submitted', schema: StockRequest }, 400: invalid },
    },
    async (req, res) => {
      res
        .status(201)
        .json(presentRequest(await requests.create(who(req), req.input.body), audienceOf(currentUser(req))));
    },
  );

  api.get(
    '/requests/:id',
    {
      operationId: 'getRequest',
      summary: 'Read a request with its lines and history',
      access: 'any-signed-in',
      params: RequestIdParams,
      responses: { 200: { description: 'Request', schema: StockRequest }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const user = currentUser(req);
      res.json(presentRequest(await requests.get(user, req.input.params.id), audienceOf(user)));
    },
  );

  const decision = (action: 'approve' | 'reject', operationId: string, result: string) =>
    api.post(
      `/requests/:id/${action}`,
      {
        operationId,
        summary: `${action === 'approve' ? 'Approve' : 'Reject'} a request awaiting approval`,
        description:
          `awaiting_approval -> ${result}, with an optional comment kept in the history. ` +
          "By the signed-in person whose email is the charge code's approverEmail (any role), or an admin; anyone else 403, " +
          'and the requester too, whatever their role (their own request needs another approver or an admin). ' +
          `The requester is emailed${result === 'approved' ? " and the stores' request inbox told it is ready to fulfil" : ''}; writes the request.${result} event.`,
        access: 'any-signed-in',
        params: RequestIdParams,
        body: DecisionBody,
        omittedBodyIsEmpty: true,
        responses: {
          200: { description: result === 'approved' ? 'Approved' : 'Rejected', schema: StockRequest },
          400: invalid,
          403: {
            description: "Neither the code's approver nor an admin, or the request's own requester",
            schema: MessageBody,
          },
          404: notFound,
          409: illegal(result),
        },
      },
      async (req, res) => {
        const { id } = req.input.params;
        res.json(presentRequest(await requests[action](who(req), id, req.input.body), audienceOf(currentUser(req))));
      },
    );
  decision('approve', 'approveRequest', 'approved');
  decision('reject', 'rejectRequest', 'rejected');

  api.post(
    '/requests/:id/fulfil',
    {
      operationId: 'fulfilRequest',
      summary: 'Fulfil a request: sell it on its charge code',
      description:
        "submitted or approved -> ready. The request is processed as a sale through the counter's own atomic processing (stock out, " +
        "one movement per line, the charge code checked again with the counter's messages, never more than the stock): each line the quantity " +
        "given in items (at most the one requested; omitted: the request's own), less when stock is short; the shortfall is recorded on the " +
        'request (shortfall, fulfilledQuantity; each short line shortReason stock when the stores held fewer than requested, staff when ' +
        'they held enough and handed out fewer) and emailed to the requester, saying which. 409 when nothing at all is in stock. The request ' +
        "gets the sale (saleId, saleNumber) and what it charged (chargedTotal, the sale's total, beside the totalAmount asked); the requester " +
        'is emailed; writes the request.ready event. Two people fulfilling at once make one sale: the ' +
        'second is 409 (ready).\n\n' +
        'Issue 43: 409 while restrictedApproval.required and no manager approved it yet (after the state check). The sale carries coshhReference ' +
        "(the body's, else the request's; 400 when an item needs one and there is none). A sale of a restricted substance is in the audit trail " +
        '(action restricted_sale) with who fulfilled it and the approving manager.',
      access: 'user',
      params: RequestIdParams,
      body: FulfilBody,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Fulfilled (ready)', schema: StockRequest },
        400: {
          description: 'Validation failed, or the charge code refused now (expired, on hold, excluded category, ...)',
          schema: ValidationErrorBody,
        },
        404: notFound,
        409: illegal(
          "ready, or nothing of the request is in stock, or its restricted substances await a manager's approval",
        ),
        503: { description: 'The database was busy; nothing was saved — try again', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentRequest(await requests.fulfil(who(req), id, req.input.body), audienceOf(currentUser(req))));
    },
  );

  api.post(
    '/requests/:id/approve-restricted',
    {
      operationId: 'approveRequestRestricted',
      summary: "A manager's approval of a request holding a restricted substance",
      description:
        "Issue 43: records a manager's (or admin's) approval of the restricted substances of a request (restrictedApproval.approvedBy, approvedAt), " +
        'with an optional comment kept in the history. It is needed on top of any charge-code approval: fulfilment waits for both. ' +
        "The status does not change. Never by the request's own requester (403). 409 when the request holds no restricted substance, " +
        'was approved already, or is no longer open (submitted, awaiting_approval, approved).',
      access: 'manager',
      params: RequestIdParams,
      body: DecisionBody,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Approved', schema: StockRequest },
        400: invalid,
        403: { description: "Below manager, or the request's own requester", schema: MessageBody },
        404: notFound,
        409: { description: 'No restricted substance, already approved, or no longer open', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(
        presentRequest(await requests.approveRestricted(who(req), id, req.input.body), audienceOf(currentUser(req))),
      );
    },
  );

  api.post(
    '/requests/:id/collect',
    {
      operationId: 'collectRequest',
      summary: 'Mark a ready request collected',
      description:
        "ready -> collected. deliveredTo (default the requester's name) is recorded on the sale as its recipient, with the requester's email. " +
        'Writes the request.collected event.',
      access: 'user',
      params: RequestIdParams,
      body: CollectBody,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Collected', schema: StockRequest },
        400: invalid,
        404: notFound,
        409: illegal('collected'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentRequest(await requests.collect(who(req), id, req.input.body), audienceOf(currentUser(req))));
    },
  );

  api.post(
    '/requests/:id/cancel',
    {
      operationId: 'cancelRequest',
      summary: 'Cancel a request before it is ready',
      description:
        'submitted, awaiting_approval or approved -> cancelled, with an optional comment. By the requester or the staff (role user and above); ' +
        "anyone else who may see it (the code's approver) 403. Writes the request.cancelled event.",
      access: 'any-signed-in',
      params: RequestIdParams,
      body: CancelBody,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Cancelled', schema: StockRequest },
        400: invalid,
        403: { description: 'Neither the requester nor staff', schema: MessageBody },
        404: notFound,
        409: illegal('cancelled'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentRequest(await requests.cancel(who(req), id, req.input.body), audienceOf(currentUser(req))));
    },
  );

  return api.router;
}
