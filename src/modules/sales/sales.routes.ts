import { Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { parse } from '../../http/validate';
import { quotesRoutes } from './quotes.routes';
import { salesAnalytics } from './sales.analytics';
import { salesReports, REPORT_CSV_HEADER } from './sales.reports';
import {
  CreateSale,
  Pagination,
  PeriodQuery,
  RecipientBody,
  RefundBody,
  ReportQuery,
  Sale,
  SaleIdParams,
  SalesQuery,
  StockCheckBody,
} from './sales.schemas';
import { salesService, type SaleRow } from './sales.service';

const invalid = { description: 'Validation failed or a business rule refused the request', schema: ValidationErrorBody };
const saleNotFound = { description: 'Sale not found', schema: MessageBody };

const SaleState = z.object({ id: z.number().int(), saleId: z.string(), isPaid: z.boolean(), status: z.string(), updatedAt: z.string() });
const paymentState = (row: SaleRow) => ({
  id: row.id,
  saleId: row.sale_id,
  isPaid: row.is_paid,
  status: row.status,
  updatedAt: row.updated_at.toISOString(),
});

const ItemStat = z.object({
  itemId: z.number().int().nullable(),
  itemName: z.string(),
  itemSku: z.string(),
  totalQuantity: z.number(),
  totalRevenue: z.number(),
  salesCount: z.number().int(),
});

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
      summary: 'Sales report (JSON or CSV)',
      description:
        'Filters: chargeCode (partial, case-insensitive), startDate/endDate (inclusive; a plain date covers its whole UTC day), unpaidOnly. ' +
        'JSON: summary and departmentSummary (by the charge code cost centre) over the whole range, one page of sales. ' +
        `CSV (format=csv): every sale in range, streamed, header \`${REPORT_CSV_HEADER}\`, every value double-quoted.`,
      access: 'auth',
      query: ReportQuery,
      responses: { 200: { description: 'Report' }, 400: invalid },
    },
    async (req, res) => {
      const { page, limit, format, ...filter } = parse(ReportQuery, req.query);
      if (format === 'json') {
        res.json(await reports.json(filter, page, limit));
        return;
      }
      const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="sales-report-${day}.csv"`);
      await reports.csv(filter, res);
      res.end();
    },
  );

  api.get(
    '/sales/analytics/most-sold-items',
    {
      summary: 'Most sold items',
      description: 'By quantity sold net of refunds; totalRevenue is that quantity at the sold unit price, before VAT. period: trailing 7, 30 or 365 days; none = all time.',
      access: 'auth',
      query: PeriodQuery,
      responses: { 200: { description: 'Items', schema: z.object({ items: z.array(ItemStat) }) }, 400: invalid },
    },
    async (req, res) => {
      const { limit, period } = parse(PeriodQuery, req.query);
      res.json({ items: await analytics.mostSoldItems(limit, period) });
    },
  );

  api.post(
    '/sales/stock-check',
    {
      summary: 'Check stock for a list of quantities',
      description: 'Entries on the same item are checked against its stock by their sum. Unknown or inactive items are unavailable (currentStock 0 when unknown).',
      access: 'auth',
      body: StockCheckBody,
      responses: {
        200: {
          description: 'Availability',
          schema: z.object({
            allAvailable: z.boolean(),
            items: z.array(z.object({ itemId: z.number(), itemName: z.string().nullable(), available: z.boolean(), currentStock: z.number(), requested: z.number() })),
          }),
        },
        400: invalid,
      },
    },
    async (req, res) => {
      const { items } = parse(StockCheckBody, req.body);
      res.json(await analytics.stockCheck(items));
    },
  );

  api.get(
    '/sales/low-stock-report',
    {
      summary: 'Active items at or below their minimum stock',
      description: '{items: [{id, name, sku, price, currentStock, minimumStock, shortfall, category {id, name, color}}], total, generatedAt}, largest shortfall first.',
      access: 'auth',
      responses: { 200: { description: 'Low stock report' } },
    },
    async (_req, res) => {
      res.json(await analytics.lowStockReport());
    },
  );

  api.get(
    '/sales',
    {
      summary: 'List sales',
      description: 'Newest first, with lines. Filters as the report: chargeCode (partial), startDate/endDate (inclusive). page default 1, limit default 50 (max 100).',
      access: 'auth',
      query: SalesQuery.omit({ unpaidOnly: true }),
      responses: { 200: { description: 'Sales', schema: z.object({ sales: z.array(Sale), pagination: Pagination }) }, 400: invalid },
    },
    async (req, res) => {
      const { page, limit, chargeCode, startDate, endDate } = parse(SalesQuery, req.query);
      res.json(await sales.list({ chargeCode, startDate, endDate }, page, limit));
    },
  );

  api.post(
    '/sales',
    {
      summary: 'Record a sale directly from lines',
      description:
        'Counter sale without a draft: {chargeCode, items [{itemId, quantity}], vatApplied?, customerNotes?}. ' +
        'Lines are priced from the items now; then exactly the checks and effects of processing a quote, in one transaction.',
      access: 'auth',
      body: CreateSale,
      responses: { 201: { description: 'Created', schema: z.object({ message: z.string(), sale: Sale }) }, 400: invalid },
    },
    async (req, res) => {
      const body = parse(CreateSale, req.body);
      const sale = await sales.create(currentUser(req), body);
      res.status(201).json({ message: 'Sale created successfully', sale });
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
    { summary: 'Read a sale with its lines', access: 'auth', params: SaleIdParams, responses: { 200: { description: 'Sale', schema: Sale }, 400: invalid, 404: saleNotFound } },
    async (req, res) => {
      const { id } = parse(SaleIdParams, req.params);
      res.json(await sales.get(id));
    },
  );

  api.patch(
    '/sales/:id/paid',
    {
      summary: 'Mark a sale paid',
      description: 'isPaid true; status completed becomes paid (a refunded status is kept). Answers both documented forms: the flat fields and {message, sale}.',
      access: 'manager',
      params: SaleIdParams,
      responses: { 200: { description: 'Paid', schema: SaleState.extend({ message: z.string(), sale: SaleState }) }, 403: 'Not a manager', 404: saleNotFound },
    },
    async (req, res) => {
      const { id } = parse(SaleIdParams, req.params);
      const state = paymentState(await sales.markPaid(id));
      res.json({ message: 'Sale marked as paid', ...state, sale: state });
    },
  );

  api.patch(
    '/sales/:id/unpaid',
    {
      summary: 'Mark a sale unpaid',
      description: 'isPaid false; status paid goes back to completed (a refunded status is kept).',
      access: 'admin',
      params: SaleIdParams,
      responses: { 200: { description: 'Unpaid', schema: z.object({ message: z.string(), sale: SaleState }) }, 403: 'Not an admin', 404: saleNotFound },
    },
    async (req, res) => {
      const { id } = parse(SaleIdParams, req.params);
      res.json({ message: 'Sale marked as unpaid', sale: paymentState(await sales.markUnpaid(id)) });
    },
  );

  api.patch(
    '/sales/:id/recipient',
    {
      summary: 'Record who received the goods',
      access: 'auth',
      params: SaleIdParams,
      body: RecipientBody,
      responses: {
        200: {
          description: 'Recorded',
          schema: z.object({
            message: z.string(),
            sale: z.object({ id: z.number(), saleId: z.string(), deliveredTo: z.string(), deliveredToEmail: z.string().nullable(), deliveredAt: z.string() }),
          }),
        },
        400: invalid,
        404: saleNotFound,
      },
    },
    async (req, res) => {
      const { id } = parse(SaleIdParams, req.params);
      const body = parse(RecipientBody, req.body);
      const row = await sales.setRecipient(id, body.deliveredTo, body.deliveredToEmail ?? null);
      res.json({
        message: 'Recipient recorded',
        sale: {
          id: row.id,
          saleId: row.sale_id,
          deliveredTo: row.delivered_to,
          deliveredToEmail: row.delivered_to_email,
          deliveredAt: row.delivered_at!.toISOString(),
        },
      });
    },
  );

  api.patch(
    '/sales/:id/refund',
    {
      summary: 'Refund quantities of a sale',
      description:
        'items [{itemId, refundQty}] within what is left unrefunded for that item on the sale; stock goes back in through the ledger; ' +
        'a note documenting the refund is added to the sale. status becomes partially_refunded, or refunded once every line is fully refunded. ' +
        'refundedAmount keeps the running total refunded (each line pro rata, rounded half-up).',
      access: { permission: 'sales.refund' },
      params: SaleIdParams,
      body: RefundBody,
      responses: {
        200: {
          description: 'Refunded',
          schema: z.object({
            message: z.string(),
            sale: z.object({ id: z.number(), saleId: z.string(), totalAmount: z.string(), refundedAmount: z.string(), status: z.string() }),
            refundedItems: z.array(z.object({ itemId: z.number(), itemName: z.string(), refundedQty: z.number(), stockRestored: z.boolean() })),
          }),
        },
        400: invalid,
        403: 'Missing the sales.refund permission',
        404: saleNotFound,
      },
    },
    async (req, res) => {
      const { id } = parse(SaleIdParams, req.params);
      const body = parse(RefundBody, req.body);
      const { sale, refundedItems } = await sales.refund(currentUser(req), id, body);
      res.json({
        message: sale.status === 'refunded' ? 'Sale fully refunded' : 'Sale partially refunded',
        sale: { id: sale.id, saleId: sale.sale_id, totalAmount: sale.total_amount, refundedAmount: sale.refunded_amount, status: sale.status },
        refundedItems,
      });
    },
  );

  return api.router;
}
