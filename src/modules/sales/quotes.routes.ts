import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { actorOf } from '../audit/audit.actor';
import { ApiRouter } from '../../http/api-router';
import { HttpError, InternalError } from '../../http/errors';
import { isTransientDatabaseError } from '../../http/error-middleware';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { presentSaleProcessed } from './sales.present';
import { SaleAuthorisationBody, SaleProcessed } from './sales.schemas';
import { salesService } from './sales.service';
import {
  presentChargeCodeChanged,
  presentDraftDeleted,
  presentDraftSaved,
  presentQuote,
  presentQuoteDeleted,
  presentQuoteList,
  presentQuoteUpdated,
} from './quotes.present';
import {
  ChangeChargeCode,
  ChargeCodeChanged,
  Quote,
  QuoteIdParams,
  QuoteList,
  QuoteSaved,
  SaveDraft,
  SessionQuery,
  UpdateQuote,
} from './quotes.schemas';
import { quotesService } from './quotes.service';

const invalid = {
  description: 'Validation failed, or a charge code check failed ({message})',
  schema: ValidationErrorBody,
};
const quoteNotFound = { description: 'Quote not found', schema: MessageBody };
const noDraft = { description: 'No draft quote found for this session', schema: MessageBody };

/**
 * Draft quotes under /api/sales/quotes, part of salesRoutes.
 * Quotes belong to the user who saved them; managers and admins reach every quote by id.
 */
export function quotesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Draft quotes');
  const quotes = quotesService(db);
  const sales = salesService(db);

  api.get(
    '/sales/quotes/current-draft',
    {
      operationId: 'getCurrentDraftQuote',
      summary: "The caller's draft for a session",
      access: 'auth',
      query: SessionQuery,
      responses: { 200: { description: 'Draft with its lines', schema: Quote }, 400: invalid, 404: noDraft },
    },
    async (req, res) => {
      const { sessionId } = req.input.query;
      res.json(presentQuote(await quotes.currentDraft(currentUser(req), sessionId)));
    },
  );

  api.patch(
    '/sales/quotes/current-draft/charge-code',
    {
      operationId: 'setCurrentDraftChargeCode',
      summary: "Change the charge code of the session's draft",
      description:
        'The code passes the same checks as on save (existence, validity window, hold, category exclusions of the lines).',
      access: 'auth',
      body: ChangeChargeCode,
      responses: { 200: { description: 'Changed', schema: ChargeCodeChanged }, 400: invalid, 404: noDraft },
    },
    async (req, res) => {
      const { chargeCode, sessionId } = req.input.body;
      res.json(presentChargeCodeChanged(await quotes.changeDraftChargeCode(currentUser(req), sessionId, chargeCode)));
    },
  );

  api.delete(
    '/sales/quotes/current-draft',
    {
      operationId: 'discardCurrentDraftQuote',
      summary: "Delete the session's draft",
      access: 'auth',
      query: SessionQuery,
      responses: { 200: { description: 'Deleted', schema: MessageBody }, 404: noDraft },
    },
    async (req, res) => {
      const { sessionId } = req.input.query;
      await quotes.deleteDraft(currentUser(req), sessionId);
      res.json(presentDraftDeleted());
    },
  );

  api.post(
    '/sales/quotes',
    {
      operationId: 'saveDraftQuote',
      summary: 'Save the draft quote of a session',
      description:
        'One draft per (user, sessionId): a repeated call replaces its lines and fields and keeps its id and quoteId. ' +
        "Lines copy the item's name, sku, price and VAT rate now; amounts are rounded half-up per line.",
      access: 'auth',
      body: SaveDraft,
      responses: {
        200: { description: 'Saved', schema: QuoteSaved },
        400: invalid,
        500: { description: 'Failed to create draft quote', schema: MessageBody },
      },
    },
    async (req, res) => {
      const body = req.input.body;
      const quote = await quotes.saveDraft(currentUser(req), body).catch((err: unknown) => {
        // a typed error, or the 503 of a database that is down or busy, is answered as it is
        if (err instanceof HttpError || isTransientDatabaseError(err)) throw err;
        req.log.error({ err }, 'draft quote save failed');
        throw InternalError('Failed to create draft quote');
      });
      res.json(presentDraftSaved(quote));
    },
  );

  api.get(
    '/sales/quotes',
    {
      operationId: 'listQuotes',
      summary: 'List draft quotes (own; managers and admins see all)',
      access: 'auth',
      responses: { 200: { description: 'Quotes, most recently updated first', schema: QuoteList } },
    },
    async (req, res) => {
      res.json(presentQuoteList(await quotes.list(currentUser(req))));
    },
  );

  api.get(
    '/sales/quotes/:id',
    {
      operationId: 'getQuote',
      summary: 'Read a quote',
      access: 'auth',
      params: QuoteIdParams,
      responses: { 200: { description: 'Quote with lines', schema: Quote }, 400: invalid, 404: quoteNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentQuote(await quotes.get(currentUser(req), id)));
    },
  );

  api.put(
    '/sales/quotes/:id',
    {
      operationId: 'updateQuote',
      summary: 'Update a quote',
      description:
        'Any of chargeCode, items (replaces all lines, repriced from the items now), vatApplied, customerNotes.',
      access: 'auth',
      params: QuoteIdParams,
      body: UpdateQuote,
      responses: { 200: { description: 'Updated', schema: QuoteSaved }, 400: invalid, 404: quoteNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentQuoteUpdated(await quotes.update(currentUser(req), id, body)));
    },
  );

  api.delete(
    '/sales/quotes/:id',
    {
      operationId: 'deleteQuote',
      summary: 'Delete a quote',
      access: 'auth',
      params: QuoteIdParams,
      responses: { 200: { description: 'Deleted', schema: MessageBody }, 404: quoteNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await quotes.remove(currentUser(req), id);
      res.json(presentQuoteDeleted());
    },
  );

  api.post(
    '/sales/quotes/:id/process',
    {
      operationId: 'processQuote',
      summary: 'Process a draft quote into a sale',
      description:
        'One transaction: charge code checks (repeated under a row lock), stock of every line (summed per item), sale and lines, ' +
        'stock out through the ledger (reason names the saleId), draft removed. Any failure changes nothing. ' +
        'A quote already processed is gone: 404 Quote not found.\n\n' +
        'The body is optional: `pin` and `recipient` for the charge-code policies of the settings (off by default). ' +
        'chargeCodes.requirePin: a code with a PIN needs it (400 when missing or wrong); after 5 wrong PINs in 15 minutes the code takes none (429) until the window ends. ' +
        "chargeCodes.requireAuthorisedUser: recipient.deliveredToEmail must be one of the code's authorised users (case-insensitive; 400 otherwise). " +
        'With `emailReceipt: true`, recipient.deliveredToEmail must be at one of the domains of the setting email.recipientDomains ' +
        "(unset: the active users' domains) or a subdomain of one (400 otherwise), and the caller may have at most email.receiptsPerHour " +
        'receipts emailed an hour (20 unset; 429 with Retry-After beyond). ' +
        'A recipient given is recorded on the sale. 409 when the code or its PIN changed while the sale was being made.\n\n' +
        'Issue 43: after the charge-code checks and before stock, every line is checked: a line whose item (or its category) has coshhRequired needs ' +
        '`coshhReference` (400 "A COSHH assessment reference is required for <SKU>", the first such line); a restricted item needs a manager or admin ' +
        '(403 "<SKU> is a restricted substance: a manager must process this sale"). A sale of a restricted substance writes an audit entry (action restricted_sale).',
      access: 'auth',
      params: QuoteIdParams,
      body: SaleAuthorisationBody,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Processed', schema: SaleProcessed },
        400: invalid,
        403: { description: 'A restricted substance, processed by a user below manager', schema: MessageBody },
        404: quoteNotFound,
        409: { description: 'The charge code or its PIN changed meanwhile; nothing was sold', schema: MessageBody },
        429: {
          description:
            "Too many incorrect PINs for the quote's charge code, or the caller has had as many receipts emailed this hour as email.receiptsPerHour allows, with Retry-After",
          schema: MessageBody,
        },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentSaleProcessed(await sales.processQuote(currentUser(req), id, body, actorOf(req))));
    },
  );

  return api.router;
}
