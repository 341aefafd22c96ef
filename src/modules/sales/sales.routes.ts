import { Router } from 'express';
import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { actorOf } from '../audit/audit.actor';
import { ApiRouter } from '../../http/api-router';
import { CsvText, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { parse } from '../../http/validate';
import { quotesRoutes } from './quotes.routes';
import { salesAnalytics } from './sales.analytics';
import {
  presentLowStockReport,
  presentMostSoldItems,
  presentStockCheck,
  presentSale,
  presentSaleCreated,
  presentSalePaid,
  presentSaleRecipient,
  presentSaleRefund,
  presentSalesPage,
  presentSalesReport,
  presentSaleUnpaid,
  REPORT_CSV_HEADER,
  salesReportCsvWriter,
} from './sales.present';
import { salesReports } from './sales.reports';
import {
  CreateSale,
  IdempotencyKeyHeader,
  MostSoldItems,
  PeriodQuery,
  SetRecipientBody,
  RefundBody,
  ReportQuery,
  Sale,
  SaleCreated,
  SaleIdParams,
  SalePaid,
  SaleRecipient,
  SaleRefund,
  SalesLowStockReport,
  SalesPage,
  SalesQuery,
  SalesReport,
  SaleUnpaid,
  StockCheckBody,
  StockCheckResult,
} from './sales.schemas';
import { salesService } from './sales.service';
import { SALE_PAID_MARKERS, SALE_UNPAID_MARKERS } from './sales.policy';

const invalid = {
  description: 'Validation failed or a business rule refused the request',
  schema: ValidationErrorBody,
};
const saleNotFound = { description: 'Sale not found', schema: MessageBody };

/** Every route under /sales: the fixed paths (the quotes' and the sales' own) are tried before /sales/:id. */
export function salesRoutes(deps: Deps): Router {
  return Router().use(quotesRoutes(deps), fixedPathRoutes(deps), byIdRoutes(deps));
}

/** /sales and the fixed paths below it (reports, analytics, stock check). */
function fixedPathRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Sales');
  const sales = salesService(db);
  const reports = salesReports(db);
  const analytics = salesAnalytics(db);

  api.get(
    '/sales/reports',
    {
      operationId: 'getSalesReport',
      summary: 'Sales report (JSON or CSV)',
      description:
        'Filters: chargeCode (partial, case-insensitive), startDate/endDate (inclusive; a plain date covers its whole UTC day), unpaidOnly, ' +
        'search (as GET /api/sales: sale number, recipient, item SKU or name). ' +
        'JSON: summary and departmentSummary (by the charge code cost centre) over the whole range, one page of sales. ' +
        `CSV (format=csv): every sale in range, streamed, header \`${REPORT_CSV_HEADER}\`, every value double-quoted.`,
      access: 'auth',
      query: ReportQuery,
      responses: {
        200: {
          description: 'Report (the JSON form; format=csv answers text/csv)',
          schema: SalesReport,
          otherContent: { 'text/csv': CsvText },
        },
        400: invalid,
      },
    },
    async (req, res) => {
      const { page, limit, format, ...filter } = req.input.query;
      if (format === 'json') {
        res.json(presentSalesReport(await reports.json(filter, page, limit), page, limit));
        return;
      }
      const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="sales-report-${day}.csv"`);
      await reports.forEachCsvBatch(filter, await salesReportCsvWriter(res));
      res.end();
    },
  );

  api.get(
    '/sales/analytics/most-sold-items',
    {
      operationId: 'getMostSoldItems',
      summary: 'Most sold items',
      description:
        'By quantity sold net of refunds; totalRevenue is that quantity at the sold unit price, before VAT. period: trailing 7, 30 or 365 days; none = all time.',
      access: 'auth',
      query: PeriodQuery,
      responses: { 200: { description: 'Items', schema: MostSoldItems }, 400: invalid },
    },
    async (req, res) => {
      const { limit, period } = req.input.query;
      res.json(presentMostSoldItems(await analytics.mostSoldItems(limit, period)));
    },
  );

  api.post(
    '/sales/stock-check',
    {
      operationId: 'checkStockForSale',
      summary: 'Check stock for a list of quantities',
      description:
        'Entries on the same item are checked against its stock by their sum. Unknown or inactive items are unavailable (currentStock 0 when unknown). ' +
        'An item tracked by lot is checked against its lots neither expired nor quarantined, as a sale takes them (currentStock stays its stock figure).',
      access: 'auth',
      body: StockCheckBody,
      responses: { 200: { description: 'Availability', schema: StockCheckResult }, 400: invalid },
    },
    async (req, res) => {
      const { items } = req.input.body;
      res.json(presentStockCheck(await analytics.stockCheck(items)));
    },
  );

  api.get(
    '/sales/low-stock-report',
    {
      operationId: 'getLowStockReport',
      summary: 'Active items at or below their minimum stock',
      description:
        '{items: [{id, name, sku, price, currentStock, minimumStock, shortfall, category {id, name, color}}], total, generatedAt}, largest shortfall first.',
      access: 'auth',
      responses: { 200: { description: 'Low stock report', schema: SalesLowStockReport } },
    },
    async (_req, res) => {
      res.json(presentLowStockReport(await analytics.lowStockReport(), new Date()));
    },
  );

  api.get(
    '/sales',
    {
      operationId: 'listSales',
      summary: 'List sales',
      description:
        'Newest first, with lines. Filters as the report: chargeCode (partial), startDate/endDate (inclusive), and search: a sale number (exact or its start), ' +
        "part of the recipient's name or email or of the COSHH assessment reference, or part of the SKU or name of any line, case-insensitive; all filters given apply together. " +
        'page default 1, limit default 50 (max 100).',
      access: 'auth',
      query: SalesQuery.omit({ unpaidOnly: true }),
      responses: { 200: { description: 'Sales', schema: SalesPage }, 400: invalid },
    },
    async (req, res) => {
      // the whole SalesQuery, not the declared one: unpaidOnly, which this list ignores, is still refused when malformed
      const { page, limit, chargeCode, startDate, endDate, search } = parse(SalesQuery, req.query);
      res.json(
        presentSalesPage(await sales.list({ chargeCode, startDate, endDate, search }, page, limit), page, limit),
      );
    },
  );

  api.post(
    '/sales',
    {
      operationId: 'createSale',
      summary: 'Record a sale directly from lines',
      description:
        'Counter sale without a draft: {chargeCode, items [{itemId, quantity}], vatApplied?, customerNotes?, pin?, recipient?, emailReceipt?}. ' +
        'Lines are priced from the items now; then exactly the checks and effects of processing a quote, in one transaction, ' +
        'the charge-code policies of the settings (pin, recipient) included: see POST /api/sales/quotes/{id}/process.\n\n' +
        'Header `Idempotency-Key` (optional, 1 to 200 printable characters, e.g. a UUID; 400 otherwise): a retry with the same key by the same user ' +
        'within 24 hours answers 201 with the sale the first request recorded (as it is now) instead of recording another; the same key with a ' +
        'different body answers 409 and records nothing; concurrent requests with one key record one sale. A request that was refused records ' +
        'nothing, its key included, so it can be sent again with the same key. ' +
        '503 (Retry-After: 1) when the database stayed busy (locks) through three attempts: nothing was saved; retrying with the same key is safe.\n\n' +
        'Issue 43: after the charge-code checks and before stock, every line is checked: a line whose item (or its category) has coshhRequired needs ' +
        '`coshhReference` (400 "A COSHH assessment reference is required for <SKU>", the first such line); a restricted item needs a manager or admin ' +
        '(403 "<SKU> is a restricted substance: a manager must process this sale"). A sale of a restricted substance writes an audit entry (action restricted_sale).',
      access: 'auth',
      body: CreateSale,
      responses: {
        201: { description: 'Created (or, for a repeated Idempotency-Key, the sale it recorded)', schema: SaleCreated },
        400: invalid,
        403: { description: 'A restricted substance, sold by a user below manager', schema: MessageBody },
        409: {
          description:
            'The Idempotency-Key was used for a different request, or the charge code or its PIN changed meanwhile',
          schema: MessageBody,
        },
        429: {
          description:
            'Too many incorrect PINs for the charge code, or the caller has had as many receipts emailed this hour as the setting email.receiptsPerHour allows (20 unset), with Retry-After',
          schema: MessageBody,
        },
        503: { description: 'The database was busy; nothing was saved — try again', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { 'idempotency-key': idempotencyKey } = parse(IdempotencyKeyHeader, {
        'idempotency-key': req.get('Idempotency-Key'),
      });
      const body = req.input.body;
      res
        .status(201)
        .json(presentSaleCreated(await sales.create(currentUser(req), body, idempotencyKey, actorOf(req))));
    },
  );

  return api.router;
}

/** /sales/:id and its actions. */
function byIdRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Sales');
  const sales = salesService(db);

  api.get(
    '/sales/:id',
    {
      operationId: 'getSale',
      summary: 'Read a sale with its lines',
      access: 'auth',
      params: SaleIdParams,
      responses: { 200: { description: 'Sale', schema: Sale }, 400: invalid, 404: saleNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentSale(await sales.get(id)));
    },
  );

  api.patch(
    '/sales/:id/paid',
    {
      operationId: 'markSalePaid',
      summary: 'Mark a sale paid',
      description:
        'isPaid true; status completed becomes paid (a refunded status is kept). Answers both documented forms: the flat fields and {message, sale}.',
      access: SALE_PAID_MARKERS,
      params: SaleIdParams,
      responses: { 200: { description: 'Paid', schema: SalePaid }, 403: 'Not a manager', 404: saleNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentSalePaid(await sales.markPaid(actorOf(req), id)));
    },
  );

  api.patch(
    '/sales/:id/unpaid',
    {
      operationId: 'markSaleUnpaid',
      summary: 'Mark a sale unpaid',
      description: 'isPaid false; status paid goes back to completed (a refunded status is kept).',
      access: SALE_UNPAID_MARKERS,
      params: SaleIdParams,
      responses: { 200: { description: 'Unpaid', schema: SaleUnpaid }, 403: 'Not an admin', 404: saleNotFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentSaleUnpaid(await sales.markUnpaid(actorOf(req), id)));
    },
  );

  api.patch(
    '/sales/:id/recipient',
    {
      operationId: 'setSaleRecipient',
      summary: 'Record who received the goods',
      description:
        "With the setting chargeCodes.requireAuthorisedUser on, deliveredToEmail must be one of the sale's charge code's authorised users (400 otherwise). " +
        "Under the setting access.profile strict, only the sale's processor or a manager may set it (403 otherwise). " +
        'With `emailReceipt: true` the receipt is emailed to deliveredToEmail, which must then be at one of the domains of the setting ' +
        "email.recipientDomains (unset: the active users' domains), or a subdomain of one (400 naming deliveredToEmail otherwise); " +
        'one person may have at most email.receiptsPerHour receipts emailed an hour (20 unset; 429 with Retry-After beyond).',
      access: 'auth',
      params: SaleIdParams,
      body: SetRecipientBody,
      responses: {
        200: { description: 'Recorded', schema: SaleRecipient },
        400: invalid,
        403: {
          description: "Under access.profile strict, neither the sale's processor nor a manager",
          schema: MessageBody,
        },
        404: saleNotFound,
        429: {
          description:
            'The caller has had as many receipts emailed this hour as email.receiptsPerHour allows, with Retry-After',
          schema: MessageBody,
        },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentSaleRecipient(await sales.setRecipient(actorOf(req), currentUser(req), id, body)));
    },
  );

  api.patch(
    '/sales/:id/refund',
    {
      operationId: 'refundSale',
      summary: 'Refund quantities of a sale',
      description:
        'items [{itemId, refundQty}] within what is left unrefunded for that item on the sale; stock goes back in through the ledger; ' +
        'a note documenting the refund is added to the sale. status becomes partially_refunded, or refunded once every line is fully refunded. ' +
        'refundedAmount keeps the running total refunded (each line pro rata, rounded half-up).',
      access: { permission: 'sales.refund' },
      params: SaleIdParams,
      body: RefundBody,
      responses: {
        200: { description: 'Refunded', schema: SaleRefund },
        400: invalid,
        403: 'Missing the sales.refund permission',
        404: saleNotFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentSaleRefund(await sales.refund(actorOf(req), id, body)));
    },
  );

  return api.router;
}
