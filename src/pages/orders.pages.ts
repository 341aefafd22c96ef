import type { Request, Response, Router } from 'express';
import { admitsUnderProfile, MANAGER_UNDER_STRICT, mayReadCostPrices } from '../auth/access-profile';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { actorOf } from '../modules/audit/audit.actor';
import { HttpError } from '../http/errors';
import { parse } from '../http/validate';
import { MAX_INVOICE_BYTES, readInvoicePdf, type ReadInvoice } from '../modules/invoices/invoices.pdf';
import {
  invoiceMatcher,
  readMatchedInvoice,
  type InvoiceLineMatch,
  type LineMatch,
} from '../modules/invoices/invoices.matching';
import { presentExtracted } from '../modules/invoices/invoices.present';
import { presentItemList } from '../modules/items/items.present';
import { ItemQuery } from '../modules/items/items.schemas';
import { itemsService, type MatchedItem } from '../modules/items/items.service';
import { orderImportService } from '../modules/orders/orders.import';
import {
  presentAddToInventoryResult,
  presentAttachedInvoice,
  presentImportResult,
  presentOrderDetail,
  presentOrderLine,
  presentOrderList,
  presentReceiveResult,
} from '../modules/orders/orders.present';
import {
  defaultMarkupPercent,
  markedUpPrice,
  orderReceiptService,
  type ScannedLines,
} from '../modules/orders/orders.receive';
import {
  AddToInventory,
  CreateOrder,
  OrderListQuery,
  OrderParams,
  ParsedData,
  ReceiveOrder,
  type OrderStatus,
} from '../modules/orders/orders.schemas';
import { ordersService } from '../modules/orders/orders.service';
import { isCancellable, isReceivable, mayManageOrders, ORDER_MANAGERS } from '../modules/orders/orders.policy';
import { sourcesService } from '../modules/sources/sources.service';
import { categoriesService } from '../modules/categories/categories.service';
import { suppliersService } from '../modules/suppliers/suppliers.service';
import { presentMovement } from '../modules/stock-movements/stock-movements.present';
import { stockMovementsService } from '../modules/stock-movements/stock-movements.service';
import {
  attempt,
  checked,
  filledIn,
  flash,
  formState,
  pageMessage,
  repeatedField,
  textField,
  type FieldErrors,
  type ReturnedForm,
} from './forms';
import { PageRouter } from './page-route';
import { labelFormForOrder } from './labels.pages';

const STATUS_LABELS: Record<OrderStatus, string> = {
  pending: 'Pending',
  partially_received: 'Partially received',
  received: 'Received',
  cancelled: 'Cancelled',
};

/** Blank rows the new-order form offers, and how many more "More lines" adds. */
const BLANK_LINES = 5;
/** Blank rows under the lines read from an invoice, for one it did not show. */
const INVOICE_BLANK_LINES = 2;
/** Matches shown for an item search on the new-order form. */
const SEARCH_MATCHES = '10';
/**
 * The invoice PDF rides between the preview and "Create order" as base64 in the form (the API
 * stores nothing until the order is created), so the multipart field must hold a whole invoice.
 */
const CARRIED_PDF_BYTES = Math.ceil((MAX_INVOICE_BYTES * 4) / 3) + 4;

type LineValues = { sku: string; name: string; quantity: string; unitCost: string };
/** A preview line's match as the page shows it: an item (exact or probable), or a new free-text line with any similar item. */
type PreviewMatch = LineMatch | { kind: 'new'; similar: MatchedItem | null };
const LINE_FIELDS = ['sku', 'name', 'quantity', 'unitCost'] as const;
const BLANK_LINE: LineValues = { sku: '', name: '', quantity: '', unitCost: '' };

/** The form's line rows as typed: one per position of the repeated sku/name/quantity/unitCost fields. */
function typedLines(body: Record<string, unknown>): LineValues[] {
  const columns = Object.fromEntries(LINE_FIELDS.map((field) => [field, repeatedField(body[field])])) as Record<
    keyof LineValues,
    string[]
  >;
  const count = Math.max(...LINE_FIELDS.map((field) => columns[field].length));
  return Array.from(
    { length: count },
    (_, i) => Object.fromEntries(LINE_FIELDS.map((field) => [field, (columns[field][i] ?? '').trim()])) as LineValues,
  );
}

const isBlank = (line: LineValues) => LINE_FIELDS.every((field) => line[field] === '');

/** The places of the rows with anything typed in them: the lines sent. */
const filledRows = (lines: LineValues[]) => lines.flatMap((line, i) => (isBlank(line) ? [] : [i]));

/** The new-order form's fields beside its lines, as typed. */
const typedNewOrder = (body: Record<string, unknown>) => ({
  supplierId: textField(body.supplierId),
  invoiceNumber: textField(body.invoiceNumber),
  notes: textField(body.notes),
  q: textField(body.q),
});

/**
 * The API names a line's error by its place among the lines sent (items.2.quantity); the form
 * shows it beside that row, which may sit lower when blank rows were left out.
 */
function errorsByRow(errors: FieldErrors, rows: number[], prefix: string): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors).map(([field, message]) => {
      const row = new RegExp(`^${prefix}\\.(\\d+)\\.(\\w+)$`).exec(field);
      return [
        row && rows[Number(row[1])] !== undefined ? `${prefix}.${rows[Number(row[1])]}.${row[2]}` : field,
        message,
      ];
    }),
  );
}

/**
 * The receive form's rows as the API's receivedItems: rows left empty are not received this time; an
 * unticked box is absent from the form. A line without an item carries SKU and price fields: ticked, it
 * becomes a new item as typed.
 */
/**
 * A lot-tracked line's lot rows as typed (issue 42): the fields lotNumber-, lotExpiresOn- and
 * lotQuantity-<orderItemId>, one of each a row; undefined when the line has none (not tracked).
 */
function typedLotRows(body: Record<string, unknown>, orderItemId: string) {
  if (body[`lotNumber-${orderItemId}`] === undefined) return undefined;
  const expiries = repeatedField(body[`lotExpiresOn-${orderItemId}`]);
  const quantities = repeatedField(body[`lotQuantity-${orderItemId}`]);
  return repeatedField(body[`lotNumber-${orderItemId}`]).map((lotNumber, row) => ({
    lotNumber: lotNumber.trim(),
    expiresOn: (expiries[row] ?? '').trim(),
    quantity: (quantities[row] ?? '').trim(),
  }));
}

/** A line's lot rows as the API's lots: the rows left empty are none, `row` the row each came from. */
function lotsOfRows(rows: { lotNumber: string; expiresOn: string; quantity: string }[]) {
  return rows.flatMap((typed, row) =>
    typed.lotNumber || typed.expiresOn || typed.quantity
      ? [
          {
            row,
            lot: { lotNumber: typed.lotNumber, quantity: typed.quantity, ...filledIn({ expiresOn: typed.expiresOn }) },
          },
        ]
      : [],
  );
}

/** The sum of lot quantities as typed, when each is a number; else undefined (the API names the field). */
function sumOfLots(lots: { quantity: string }[]): string | undefined {
  if (lots.length === 0 || lots.some((lot) => !/^\d+(\.\d+)?$/.test(lot.quantity))) return undefined;
  return String(lots.reduce((sum, lot) => sum + Math.round(Number(lot.quantity) * 100), 0) / 100);
}

function receivedLines(body: Record<string, unknown>) {
  const quantities = repeatedField(body.receivedQuantity).map((q) => q.trim());
  const newItemOf = (orderItemId: string) =>
    typeof body[`sku-${orderItemId}`] === 'string' && checked(body[`addToInventory-${orderItemId}`])
      ? {
          sku: textField(body[`sku-${orderItemId}`]),
          price: textField(body[`price-${orderItemId}`]),
          ...filledIn({ categoryId: textField(body.newItemCategoryId) }),
        }
      : {};
  return repeatedField(body.orderItemId).flatMap((orderItemId, i) => {
    const rows = typedLotRows(body, orderItemId);
    const lots = rows && lotsOfRows(rows).map(({ lot }) => lot);
    // a tracked line's quantity left empty is what its lots add up to
    const quantity = quantities[i] || (lots && sumOfLots(lots));
    if (!quantity) return [];
    return [
      {
        orderItemId,
        receivedQuantity: quantity,
        addToInventory: checked(body[`addToInventory-${orderItemId}`]),
        ...newItemOf(orderItemId),
        ...(lots && lots.length > 0 ? { lots } : {}),
      },
    ];
  });
}

/** The add-to-inventory form's lines: every line listed gets the SKU and price typed beside it. */
const newItemLines = (body: Record<string, unknown>) =>
  repeatedField(body.newItemLineId).map((orderItemId) => ({
    orderItemId,
    sku: textField(body[`new-sku-${orderItemId}`]),
    price: textField(body[`new-price-${orderItemId}`]),
  }));

/** The page's status filter as typed, for re-showing it. */
const typedFilter = (query: Request['query']) => ({
  status: textField(query.status),
  supplierId: textField(query.supplierId),
});

export function ordersPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const orders = ordersService(db);
  const receipts = orderReceiptService(db);
  const imports = orderImportService(db);
  const items = itemsService(db);
  const suppliers = suppliersService(db);
  const sources = sourcesService(db);
  const movements = stockMovementsService(db);
  const categories = categoriesService(db);
  const matcher = invoiceMatcher(db);

  pages.use('/orders', (req, res, next) => {
    res.locals.stylesheets = ['/assets/css/orders.css'];
    // the new-order buttons: the policy the API's guards keep
    res.locals.managesOrders = req.user !== undefined && mayManageOrders(req.user);
    res.locals.scripts = ['/assets/js/orders.js'];
    next();
  });

  pages.get('/orders', { access: 'user', query: OrderListQuery, fromQuery: filledIn }, async (req, res) => {
    const values = typedFilter(req.query);
    const query = await attempt(() => req.input.query);
    const view = { title: 'Orders', values, statusLabels: STATUS_LABELS, suppliers: await suppliers.list() };
    if (!query.ok) {
      res.status(query.status).render('orders/index', {
        ...view,
        errors: query.errors,
        message: query.message,
        orders: [],
        costPrices: false,
      });
      return;
    }
    const [rows, costPrices] = await Promise.all([orders.list(query.value), mayReadCostPrices(db, currentUser(req))]);
    res.render('orders/index', {
      ...view,
      errors: {},
      message: null,
      orders: presentOrderList(rows, costPrices),
      costPrices,
    });
  });

  // ---- a new order typed in, its lines by SKU ------------------------------------------

  type NewOrderForm = {
    status?: number;
    values: { supplierId: string; invoiceNumber: string; notes: string; q: string };
    lines: LineValues[];
    errors: FieldErrors;
    message: string | null;
    matches: Awaited<ReturnType<typeof searchItems>>;
  };

  async function renderNewOrder(res: Response, form: NewOrderForm) {
    const lines = [
      ...form.lines,
      ...Array.from({ length: Math.max(BLANK_LINES - form.lines.length, 0) }, () => ({ ...BLANK_LINE })),
    ];
    res
      .status(form.status ?? 200)
      .render('orders/new', { title: 'New order', ...form, lines, suppliers: await suppliers.list() });
  }

  /**
   * Items whose name or SKU contains the search, as the items list API finds them, each with the unit cost
   * its Add button fills in (orders.expectedCosts: the preferred supplier's price, else the last paid);
   * null before anything is typed.
   */
  async function searchItems(typed: string) {
    const q = typed.trim();
    if (q === '') return null;
    const query = parse(ItemQuery, { search: q, limit: SEARCH_MATCHES });
    const found = presentItemList(await items.list({ ...query, includeInactive: false })).items;
    const costs = await orders.expectedCosts(found.map((item) => item.id));
    return found.map((item) => ({ ...item, expectedCost: costs.get(item.id) ?? '' }));
  }

  pages.get('/orders/new', { access: ORDER_MANAGERS }, async (_req, res) => {
    await renderNewOrder(res, {
      values: { supplierId: '', invoiceNumber: '', notes: '', q: '' },
      lines: [],
      errors: {},
      message: null,
      matches: null,
    });
  });

  // What the search box shows as it is typed into (htmx); the form's Search button does the same without script.
  pages.get('/orders/item-search', { access: ORDER_MANAGERS }, async (req, res) => {
    const q = textField(req.query.q);
    res.render('orders/_item-matches', { q, matches: await searchItems(q) });
  });

  pages.post(
    '/orders',
    {
      access: ORDER_MANAGERS,
      form: CreateOrder,
      // each line that names an item as the invoice import matches it goes as that item; anything else is free text
      fromForm: (body, _req, matched: InvoiceLineMatch[]) => {
        const { supplierId, invoiceNumber, notes } = typedNewOrder(body);
        const typed = typedLines(body);
        return {
          ...filledIn({ supplierId, invoiceNumber, notes }),
          items: filledRows(typed).map((i, n) => {
            const { match } = matched[n];
            return { ...filledIn({ ...typed[i] }), itemId: match?.kind === 'exact' ? match.item.id : null };
          }),
        };
      },
    },
    async (req, res) => {
      const values = typedNewOrder(req.body);
      const typed = typedLines(req.body);
      const form: NewOrderForm = { values, lines: typed, errors: {}, message: null, matches: null };
      if (req.body.action === 'search') return renderNewOrder(res, { ...form, matches: await searchItems(values.q) });
      if (req.body.action === 'more') {
        return renderNewOrder(res, {
          ...form,
          lines: [...typed, ...Array.from({ length: BLANK_LINES }, () => ({ ...BLANK_LINE }))],
        });
      }
      const rows = filledRows(typed);
      const result = await attempt(async () => {
        // a line names its item as the API's invoice import matches it (its SKU, the supplier's part number, its name: exact matches only)
        const matched = await matcher.matchLines(
          values.supplierId.trim() || null,
          rows.map((i) => ({ name: typed[i].name, sku: typed[i].sku || null })),
        );
        return orders.create(req.input.formWith(matched), currentUser(req).id);
      });
      if (!result.ok) {
        const errors = errorsByRow(result.errors, rows, 'items');
        return renderNewOrder(res, {
          ...form,
          matches: await searchItems(values.q),
          status: result.status,
          errors,
          message: result.message,
        });
      }
      const order = presentOrderDetail(result.value);
      flash(req, `Order ${order.orderId} created with ${order.items.length} line(s)`);
      res.redirect(303, `/orders/${order.orderId}`);
    },
  );

  // ---- a new order from an invoice PDF --------------------------------------------------

  type InvoiceForm = {
    status?: number;
    pdf: ReadInvoice;
    values: { supplier: string; invoiceNumber: string; notes: string };
    lines: LineValues[];
    errors: FieldErrors;
    message: string | null;
  };

  /**
   * What Create order will do with each line (the import takes exact matches only, a typed SKU being
   * one), told as the invoice's text matched it while the SKU is still the one it suggested: a
   * "probable" line stays marked until the person changes or clears its SKU (keeping it confirms).
   */
  async function previewMatches(supplierId: string | null, lines: LineValues[]): Promise<(PreviewMatch | undefined)[]> {
    const named = lines.flatMap((line, i) => (line.name === '' ? [] : [i]));
    const [created, suggested] = await Promise.all([
      matcher.matchLines(
        supplierId,
        named.map((i) => ({ name: lines[i].name, sku: lines[i].sku || null })),
      ),
      matcher.matchLines(
        supplierId,
        named.map((i) => ({ name: lines[i].name })),
      ),
    ]);
    const byRow = new Map(named.map((row, n) => [row, { created: created[n].match, suggested: suggested[n].match }]));
    return lines.map((_line, row) => {
      const found = byRow.get(row);
      if (!found) return undefined;
      const { created: match, suggested: suggestion } = found;
      // the SKU filled in for a match names the same item: show how the invoice's text matched it
      if (match?.kind === 'exact') return suggestion?.item.id === match.item.id ? suggestion : match;
      return { kind: 'new', similar: match?.item ?? null };
    });
  }

  /** The preview: what was read, editable, each line shown with the item it will be matched to on Create order. */
  async function renderInvoicePreview(res: Response, form: InvoiceForm) {
    // two empty rows at the end for a line the invoice did not show (rows keep their places: errors name them by place)
    const trailingBlank = form.lines.length - 1 - form.lines.findLastIndex((line) => !isBlank(line));
    const lines = [
      ...form.lines,
      ...Array.from({ length: Math.max(INVOICE_BLANK_LINES - trailingBlank, 0) }, () => ({ ...BLANK_LINE })),
    ];
    const supplier =
      form.values.supplier.trim() === '' ? undefined : await suppliers.findByName(form.values.supplier.trim());
    const matches = await previewMatches(supplier?.id ?? null, lines);
    res.status(form.status ?? 200).render('orders/from-invoice', {
      title: 'Order from an invoice',
      ...form,
      lines,
      extracted: presentExtracted(form.pdf.extracted),
      carried: { data: form.pdf.bytes.toString('base64'), filename: form.pdf.filename },
      matches,
      supplier: supplier ?? null,
      // the supplier's items (its sources), offered as SKUs to match a line to
      supplierItems: supplier ? await sources.listForSupplier(supplier.id) : [],
      uploadMessage: null,
    });
  }

  const renderUpload = (res: Response, status: number, message: string | null) =>
    res
      .status(status)
      .render('orders/from-invoice', { title: 'Order from an invoice', pdf: null, uploadMessage: message });

  pages.get('/orders/new-from-invoice', { access: ORDER_MANAGERS }, (_req, res) => {
    renderUpload(res, 200, null);
  });

  pages.post(
    '/orders/new-from-invoice',
    { access: ORDER_MANAGERS, upload: { field: 'invoice', maxBytes: MAX_INVOICE_BYTES } },
    async (req, res) => {
      const read = await attempt(() => readMatchedInvoice(db, req.file, currentUser(req).id));
      if (!read.ok) return renderUpload(res, read.status, read.message);
      const { pdf, lines: matched } = read.value;
      const { extracted } = pdf;
      await renderInvoicePreview(res, {
        pdf,
        values: { supplier: extracted.supplierName ?? '', invoiceNumber: extracted.invoiceNumber ?? '', notes: '' },
        // each matched line comes with its item's SKU, so Create order takes it; a probable one is marked for the person to check
        lines: extracted.items.map((line, i) => ({
          sku: matched[i].match?.item.sku ?? '',
          name: line.name,
          quantity: String(line.quantity),
          unitCost: line.unitPrice,
        })),
        errors: {},
        message:
          extracted.items.length === 0 ? 'No order lines could be read from the invoice: type them in below' : null,
      });
    },
  );

  pages.post(
    '/orders/new-from-invoice/create',
    {
      access: ORDER_MANAGERS,
      upload: { field: 'invoice', maxBytes: MAX_INVOICE_BYTES, maxFieldBytes: CARRIED_PDF_BYTES },
      form: ParsedData,
      fromForm: (body) => {
        const typed = typedLines(body);
        const values = {
          supplier: textField(body.supplier),
          invoiceNumber: textField(body.invoiceNumber),
          notes: textField(body.notes),
        };
        return {
          ...filledIn(values),
          items: typed.filter((line) => !isBlank(line)).map((line) => filledIn({ ...line })),
        };
      },
    },
    async (req, res) => {
      // The carried PDF is read again exactly as an upload is: a tampered one is refused the same way.
      const bytes = Buffer.from(textField(req.body.invoiceData), 'base64');
      const read = await attempt(() =>
        readInvoicePdf(
          { originalname: textField(req.body.invoiceFilename), buffer: bytes, size: bytes.length },
          { readBy: currentUser(req).id },
        ),
      );
      if (!read.ok) return renderUpload(res, read.status, read.message);
      const values = {
        supplier: textField(req.body.supplier),
        invoiceNumber: textField(req.body.invoiceNumber),
        notes: textField(req.body.notes),
      };
      const typed = typedLines(req.body);
      const form: InvoiceForm = { pdf: read.value, values, lines: typed, errors: {}, message: null };
      if (req.body.action === 'check') return renderInvoicePreview(res, form);
      const rows = filledRows(typed);
      const result = await attempt(() => imports.fromParsedData(req.input.form, currentUser(req).id, read.value));
      if (!result.ok)
        return renderInvoicePreview(res, {
          ...form,
          status: result.status,
          errors: errorsByRow(result.errors, rows, 'items'),
          message: result.message,
        });
      const presented = presentImportResult(result.value);
      flash(req, presented.message);
      res.redirect(303, `/orders/${presented.order.orderId}`);
    },
  );

  // ---- one order: receive, invoice -----------------------------------------------------

  /** The page's forms: the one a refused post re-renders is named in its ReturnedForm. */
  type OrderFormName = 'receive' | 'invoice' | 'inventory' | 'cancel';

  async function renderOrder(
    req: Request,
    res: Response,
    id: string,
    returned: ReturnedForm<OrderFormName> | null = null,
  ) {
    const user = currentUser(req);
    // cost prices and the invoice PDF: anyone signed in, managers under access.profile strict
    const [detail, underProfile] = await Promise.all([
      orders.get(id),
      admitsUnderProfile(db, user, MANAGER_UNDER_STRICT),
    ]);
    const order = presentOrderDetail(detail, underProfile);
    const canManage = mayManageOrders(user);
    // received lines that name no item yet: the API's add-to-inventory creates their items
    const withoutItem = order.items.filter((line) => line.itemId === null && line.receivedQuantity > 0);
    // open lines that name no item: receiving one into inventory makes it a new item, its SKU and price asked for
    const freeTextOpen = order.items.filter((line) => line.itemId === null && line.outstandingQuantity > 0);
    const [orderMovements, categoryRows, markup, trackedIds] = await Promise.all([
      movements.list({ referenceType: 'order', referenceId: order.orderId, limit: 100 }),
      canManage && (withoutItem.length > 0 || freeTextOpen.length > 0) ? categories.list() : [],
      freeTextOpen.length > 0 || withoutItem.length > 0 ? defaultMarkupPercent(db) : '0',
      itemsService(db).lotTracked(
        order.items.flatMap((line) => (line.itemId !== null && line.outstandingQuantity > 0 ? [line.itemId] : [])),
      ),
    ]);
    // the price a new item is proposed at; none where the cost is hidden (those forms are a manager's anyway)
    const proposedPrice = (unitCost: string | null) => (unitCost === null ? '' : markedUpPrice(unitCost, markup));
    res.status(returned?.status ?? 200).render('orders/show', {
      title: `Order ${order.orderId}`,
      stylesheets: ['/assets/css/orders.css', '/assets/css/labels.css'],
      order,
      // the items received, one label a unit (a part unit counts as one); lots received, lot labels
      labelForm: await labelFormForOrder(db, canManage ? order : { ...order, items: [] }),
      statusLabels: STATUS_LABELS,
      movements: orderMovements.map(presentMovement),
      canManage,
      costPrices: underProfile,
      mayDownloadInvoice: underProfile,
      withoutItem,
      categories: categoryRows,
      inventoryForm: formState(returned, 'inventory', {
        categoryId: '',
        sku: Object.fromEntries(withoutItem.map((line) => [line.orderItemId, line.sku ?? ''])),
        price: Object.fromEntries(withoutItem.map((line) => [line.orderItemId, proposedPrice(line.unitCost)])),
      }),
      markup,
      receiveForm: formState(returned, 'receive', {
        receivedQuantity: {},
        addToInventory: Object.fromEntries(order.items.map((line) => [line.orderItemId, true])),
        sku: Object.fromEntries(freeTextOpen.map((line) => [line.orderItemId, line.sku ?? ''])),
        price: Object.fromEntries(freeTextOpen.map((line) => [line.orderItemId, proposedPrice(line.unitCost)])),
        newItemCategoryId: '',
        lots: {},
      }),
      // lot-tracked lines (issue 42): their lot rows, each a lot number, an expiry and a quantity
      trackedLines: new Set(
        order.items.flatMap((line) => (line.itemId !== null && trackedIds.has(line.itemId) ? [line.orderItemId] : [])),
      ),
      invoiceForm: formState(returned, 'invoice', {}),
      cancelForm: formState(returned, 'cancel', {}),
      canReceive: canManage && isReceivable(order.status),
      canCancel:
        canManage &&
        isCancellable(
          order.status,
          order.items.map((line) => line.receivedQuantity),
        ),
    });
  }

  pages.get('/orders/:id', { access: 'user', params: OrderParams }, async (req, res) => {
    await renderOrder(req, res, req.input.params.id);
  });

  // A code scanned into the receive form's scan box (public/js/receive-scan.js): the open lines of the
  // item it names, as JSON for the script, or why it cannot be received ({message}, the API's error body).
  pages.get('/orders/:id/receive/lookup', { access: ORDER_MANAGERS, params: OrderParams }, async (req, res) => {
    const { id } = req.input.params;
    let found: ScannedLines;
    try {
      found = await receipts.openLinesForCode(id, textField(req.query.code));
    } catch (err) {
      if (err instanceof HttpError && err.status < 500)
        return res.status(err.status).json({ message: pageMessage(err) });
      throw err;
    }
    const { code, itemId, lines, tracked, lot } = found;
    res.json({
      code,
      itemId,
      tracked,
      lot,
      lines: lines
        .map((line) => presentOrderLine(line, false))
        .map(({ orderItemId, name, outstandingQuantity }) => ({
          orderItemId,
          name,
          outstandingQuantity,
        })),
    });
  });

  pages.post(
    '/orders/:id/receive',
    {
      access: ORDER_MANAGERS,
      params: OrderParams,
      form: ReceiveOrder,
      fromForm: (body) => ({ receivedItems: receivedLines(body) }),
    },
    async (req, res) => {
      const { id } = req.input.params;
      const lineIds = repeatedField(req.body.orderItemId);
      const quantities = repeatedField(req.body.receivedQuantity).map((q) => q.trim());
      const received = receivedLines(req.body);
      const result = await attempt(() => receipts.receive(id, req.input.form, actorOf(req)));
      if (!result.ok) {
        const errors = Object.fromEntries(
          Object.entries(result.errors).map(([field, message]) => {
            const lotRow = /^receivedItems\.(\d+)\.lots(?:\.(\d+)\.(\w+))?$/.exec(field);
            if (lotRow) {
              const lineId = received[Number(lotRow[1])].orderItemId;
              if (lotRow[2] === undefined) return [`lots-${lineId}`, message];
              const row = lotsOfRows(typedLotRows(req.body, lineId) ?? [])[Number(lotRow[2])]?.row ?? 0;
              const name = { lotNumber: 'lotNumber', expiresOn: 'lotExpiresOn' }[lotRow[3]] ?? 'lotQuantity';
              return [`${name}-${lineId}-${row}`, message];
            }
            const row = /^receivedItems\.(\d+)\.(\w+)$/.exec(field);
            if (!row) return [field, message];
            const lineId = received[Number(row[1])].orderItemId;
            const formField =
              { sku: `sku-${lineId}`, price: `price-${lineId}`, categoryId: 'newItemCategoryId' }[row[2]] ??
              `receivedQuantity-${lineId}`;
            return [formField, message];
          }),
        );
        const values = {
          receivedQuantity: Object.fromEntries(lineIds.map((lineId, i) => [lineId, quantities[i] ?? ''])),
          addToInventory: Object.fromEntries(
            lineIds.map((lineId) => [lineId, checked(req.body[`addToInventory-${lineId}`])]),
          ),
          sku: Object.fromEntries(lineIds.map((lineId) => [lineId, textField(req.body[`sku-${lineId}`])])),
          price: Object.fromEntries(lineIds.map((lineId) => [lineId, textField(req.body[`price-${lineId}`])])),
          newItemCategoryId: textField(req.body.newItemCategoryId),
          lots: Object.fromEntries(
            lineIds.flatMap((lineId) => {
              const rows = typedLotRows(req.body, lineId);
              return rows ? [[lineId, rows]] : [];
            }),
          ),
        };
        return renderOrder(req, res, id, { form: 'receive', ...result, errors, values });
      }
      const presented = presentReceiveResult(result.value);
      flash(req, presented.message);
      res.redirect(303, `/orders/${presented.order.orderId}`);
    },
  );

  pages.post('/orders/:id/cancel', { access: ORDER_MANAGERS, params: OrderParams }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(() => orders.cancel(id, actorOf(req)), [409]);
    if (!result.ok) return renderOrder(req, res, id, { form: 'cancel', ...result, values: {} });
    const order = presentOrderDetail(result.value);
    flash(req, `Order ${order.orderId} cancelled`);
    res.redirect(303, `/orders/${order.orderId}`);
  });

  pages.post(
    '/orders/:id/add-to-inventory',
    {
      access: ORDER_MANAGERS,
      params: OrderParams,
      form: AddToInventory,
      fromForm: (body) => ({ ...filledIn({ categoryId: body.categoryId }), items: newItemLines(body) }),
    },
    async (req, res) => {
      const { id } = req.input.params;
      const typed = newItemLines(req.body);
      const result = await attempt(
        () => receipts.addToInventory(id, req.input.form, actorOf(req)),
        [400, 404, 409, 422],
      );
      if (!result.ok) {
        const errors = Object.fromEntries(
          Object.entries(result.errors).map(([field, message]) => {
            const row = /^items\.(\d+)\.(sku|price)$/.exec(field);
            return [row ? `new-${row[2]}-${typed[Number(row[1])].orderItemId}` : field, message];
          }),
        );
        const values = {
          categoryId: textField(req.body.categoryId),
          sku: Object.fromEntries(typed.map((line) => [line.orderItemId, line.sku])),
          price: Object.fromEntries(typed.map((line) => [line.orderItemId, line.price])),
        };
        return renderOrder(req, res, id, { form: 'inventory', ...result, errors, values });
      }
      const presented = presentAddToInventoryResult(result.value);
      flash(req, presented.message);
      res.redirect(303, `/orders/${presented.order.orderId}`);
    },
  );

  pages.post(
    '/orders/:id/invoice',
    { access: ORDER_MANAGERS, params: OrderParams, upload: { field: 'invoice', maxBytes: MAX_INVOICE_BYTES } },
    async (req, res) => {
      const { id } = req.input.params;
      const result = await attempt(() => orders.attachInvoice(id, req.file, currentUser(req).id));
      if (!result.ok) return renderOrder(req, res, id, { form: 'invoice', ...result, values: {} });
      const presented = presentAttachedInvoice(result.value);
      flash(req, presented.message);
      res.redirect(303, `/orders/${presented.invoice.orderId}`);
    },
  );

  return pages.router;
}
