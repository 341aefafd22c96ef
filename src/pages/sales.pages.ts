import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { actorOf } from '../modules/audit/audit.actor';
import {
  presentSale,
  presentSalePaid,
  presentSaleRecipient,
  presentSaleRefund,
  presentSalesPage,
  presentSalesReport,
  presentSaleUnpaid,
} from '../modules/sales/sales.present';
import { salesReports } from '../modules/sales/sales.reports';
import { mayMarkPaid, mayMarkUnpaid, SALE_PAID_MARKERS, SALE_UNPAID_MARKERS } from '../modules/sales/sales.policy';
import { RecipientBody, RefundBody, SaleIdParams, SalesQuery, type Sale } from '../modules/sales/sales.schemas';
import { leftToRefund, mayChangeRecipient, salesService, type SaleRecord } from '../modules/sales/sales.service';
import type { SalesFilterInput } from '../modules/sales/sales.filters';
import { presentMovement } from '../modules/stock-movements/stock-movements.present';
import { stockMovementsService } from '../modules/stock-movements/stock-movements.service';
import { usersService } from '../modules/users/users.service';
import { attempt, filledIn, flash, formState, repeatedField, type FieldErrors, type ReturnedForm } from './forms';
import { NOTE_FORM, notesSection } from './notes-section';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

const SALE_STATUS_LABELS: Record<Sale['status'], string> = {
  completed: 'Completed',
  paid: 'Paid',
  partially_refunded: 'Partially refunded',
  refunded: 'Refunded',
};

/** The filter as query parameters, for page links and the CSV link: only the fields in use. */
function filterParams(filter: SalesFilterInput, extra: Record<string, string> = {}): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of ['search', 'chargeCode', 'startDate', 'endDate'] as const)
    if (filter[key]) params.set(key, filter[key]);
  if (filter.unpaidOnly) params.set('unpaidOnly', 'true');
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params;
}

/** Previous and next links of a paged list, keeping its filter and page size. */
function pageLinks(
  path: string,
  filter: SalesFilterInput,
  { page, limit, totalPages }: { page: number; limit: number; totalPages: number },
) {
  const href = (n: number) => `${path}?${filterParams(filter, { limit: String(limit), page: String(n) })}`;
  return {
    page,
    totalPages,
    previous: page > 1 ? href(page - 1) : null,
    next: page < totalPages ? href(page + 1) : null,
  };
}

/** The filter form's values as typed (strings), for re-showing them. */
const typedFilter = (query: Request['query']) => ({
  search: typeof query.search === 'string' ? query.search : '',
  chargeCode: typeof query.chargeCode === 'string' ? query.chargeCode : '',
  startDate: typeof query.startDate === 'string' ? query.startDate : '',
  endDate: typeof query.endDate === 'string' ? query.endDate : '',
  unpaidOnly: query.unpaidOnly === 'true',
});

/** The refund form's rows: one per item still on the sale with something left to refund. */
function refundableItems({ lines }: SaleRecord) {
  const byItem = new Map<number, SaleRecord['lines']>();
  for (const line of lines)
    if (line.item_id !== null) byItem.set(line.item_id, [...(byItem.get(line.item_id) ?? []), line]);
  return [...byItem.entries()]
    .map(([itemId, itemLines]) => ({
      itemId,
      itemName: itemLines[0].item_name,
      itemSku: itemLines[0].item_sku,
      left: leftToRefund(itemLines),
    }))
    .filter((item) => item.left.gt(0))
    .map((item) => ({ ...item, left: item.left.toFixed(2) }));
}

/** The refund form's repeated itemId/refundQty fields as the API's body; rows left empty are not part of it. */
function refundRequest(body: Record<string, unknown>) {
  const itemIds = repeatedField(body.itemId);
  const quantities = repeatedField(body.refundQty);
  const items = itemIds
    .map((itemId, i) => ({ itemId, refundQty: (quantities[i] ?? '').trim() }))
    .filter((r) => r.refundQty !== '');
  const note = typeof body.note === 'string' && body.note.trim() !== '' ? body.note : undefined;
  return { items, note, typed: Object.fromEntries(itemIds.map((itemId, i) => [itemId, quantities[i] ?? ''])) };
}

/** The page's forms: the one a refused post re-renders is named in its ReturnedForm. */
type SaleFormName = 'recipient' | 'note' | 'refund';

export function salesPages({ db, reads }: Deps): Router {
  const pages = new PageRouter(db);
  const sales = salesService(db);
  const noteSection = notesSection(db);
  const movements = stockMovementsService(db);
  const users = usersService(db);

  pages.use('/sales', (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/sales.css'];
    next();
  });

  pages.get('/sales', { access: 'user', query: SalesQuery, fromQuery: filledIn }, async (req, res) => {
    const values = typedFilter(req.query);
    const query = await attempt(() => req.input.query);
    const view = {
      title: 'Sales',
      values,
      errors: {} as FieldErrors,
      message: null as string | null,
      sales: [] as Sale[],
      pagination: null as unknown,
      statusLabels: SALE_STATUS_LABELS,
    };
    if (!query.ok) {
      res.status(query.status).render(wantsPartial(req) ? 'sales/_list' : 'sales/index', {
        ...view,
        errors: query.errors,
        message: query.message,
      });
      return;
    }
    const { page, limit, ...filter } = query.value;
    const presented = presentSalesPage(await sales.list(filter, page, limit), page, limit);
    const pagination = {
      ...pageLinks('/sales', filter, { page, limit, totalPages: presented.pagination.totalPages }),
      total: presented.pagination.total,
    };
    res.render(wantsPartial(req) ? 'sales/_list' : 'sales/index', { ...view, sales: presented.sales, pagination });
  });

  // before /sales/:id, which would read "report" as an id
  pages.get('/sales/report', { access: 'user', query: SalesQuery, fromQuery: filledIn }, async (req, res) => {
    const values = typedFilter(req.query);
    const query = await attempt(() => req.input.query);
    const view = { title: 'Sales report', values, errors: {} as FieldErrors, message: null as string | null };
    if (!query.ok) {
      res.status(query.status).render('sales/report', { ...view, errors: query.errors, message: query.message });
      return;
    }
    const { page, limit, ...filter } = query.value;
    // a read replica when one is healthy and has the caller's own writes (issue 44)
    const reports = salesReports(reads.forReports(req));
    const report = presentSalesReport(await reports.json(filter, page, limit), page, limit).data;
    res.render('sales/report', {
      ...view,
      statusLabels: SALE_STATUS_LABELS,
      report,
      pagination: {
        ...pageLinks('/sales/report', filter, { page, limit, totalPages: report.pagination.totalPages }),
        total: report.pagination.total,
      },
      // the API's own CSV report: the session cookie signs the download in
      csvHref: `/api/sales/reports?${filterParams(filter, { format: 'csv' })}`,
    });
  });

  async function renderSale(
    req: Request,
    res: Response,
    id: number,
    returned: ReturnedForm<SaleFormName> | null = null,
  ) {
    const user = currentUser(req);
    const record = await sales.get(id);
    const sale = presentSale(record);
    const [saleMovements, saleNotes, canRefund, canSetRecipient] = await Promise.all([
      movements.list({ referenceType: 'sale', referenceId: sale.saleId, limit: 100 }),
      noteSection.list(req, 'sale', String(id)),
      users.hasPermission(user, 'sales.refund'),
      mayChangeRecipient(db, user, record.sale),
    ]);
    // each form shows what was typed and what to fix when it is the one that came back, else its starting values
    res.status(returned?.status ?? 200).render('sales/show', {
      title: `Sale ${sale.saleId}`,
      sale,
      statusLabels: SALE_STATUS_LABELS,
      movements: saleMovements.map(presentMovement),
      notes: saleNotes,
      canMarkPaid: mayMarkPaid(user),
      canMarkUnpaid: mayMarkUnpaid(user),
      canSetRecipient,
      refundable: canRefund ? refundableItems(record) : null,
      recipientForm: formState(returned, 'recipient', {
        deliveredTo: sale.deliveredTo ?? '',
        deliveredToEmail: sale.deliveredToEmail ?? '',
      }),
      noteForm: formState(returned, 'note', { text: '' }),
      refundForm: formState(returned, 'refund', { refundQty: {}, note: '' }),
    });
  }

  pages.get('/sales/:id', { access: 'user', params: SaleIdParams }, async (req, res) => {
    await renderSale(req, res, req.input.params.id);
  });

  pages.post('/sales/:id/paid', { access: SALE_PAID_MARKERS, params: SaleIdParams }, async (req, res) => {
    const { id } = req.input.params;
    flash(req, presentSalePaid(await sales.markPaid(actorOf(req), id)).message);
    res.redirect(303, `/sales/${id}`);
  });

  pages.post('/sales/:id/unpaid', { access: SALE_UNPAID_MARKERS, params: SaleIdParams }, async (req, res) => {
    const { id } = req.input.params;
    flash(req, presentSaleUnpaid(await sales.markUnpaid(actorOf(req), id)).message);
    res.redirect(303, `/sales/${id}`);
  });

  pages.post(
    '/sales/:id/recipient',
    { access: 'user', params: SaleIdParams, form: RecipientBody, fromForm: filledIn },
    async (req, res) => {
      const { id } = req.input.params;
      const result = await attempt(
        () => sales.setRecipient(actorOf(req), currentUser(req), id, req.input.form),
        // 429: the person's receipts this hour are spent (issue 40), said beside the form
        [400, 409, 422, 429],
      );
      if (!result.ok) return renderSale(req, res, id, { form: 'recipient', ...result, values: req.body });
      flash(req, presentSaleRecipient(result.value).message);
      res.redirect(303, `/sales/${id}`);
    },
  );

  pages.post('/sales/:id/notes', { access: 'user', params: SaleIdParams, ...NOTE_FORM }, async (req, res) => {
    const { id } = req.input.params;
    const refused = await noteSection.add(req, 'sale', String(id));
    if (refused) return renderSale(req, res, id, refused);
    res.redirect(303, `/sales/${id}`);
  });

  pages.post(
    '/sales/:id/refund',
    {
      access: { permission: 'sales.refund' },
      params: SaleIdParams,
      form: RefundBody,
      fromForm: (body) => {
        const { items, note } = refundRequest(body);
        return { items, note };
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { items, typed } = refundRequest(req.body);
      const result = await attempt(() => sales.refund(actorOf(req), id, req.input.form));
      if (!result.ok) {
        // the API names a row by its place in items; the form names it by its item
        const errors = Object.fromEntries(
          Object.entries(result.errors).map(([field, message]) => {
            const row = /^items\.(\d+)\./.exec(field);
            return [row ? `refundQty-${items[Number(row[1])].itemId}` : field, message];
          }),
        );
        return renderSale(req, res, id, {
          form: 'refund',
          ...result,
          errors,
          values: { refundQty: typed, note: req.body.note ?? '' },
        });
      }
      flash(req, presentSaleRefund(result.value).message);
      res.redirect(303, `/sales/${id}`);
    },
  );

  return pages.router;
}
