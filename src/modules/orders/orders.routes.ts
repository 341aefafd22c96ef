import type { Request } from 'express';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { BadRequest } from '../../http/errors';
import { IdParams, parse } from '../../http/validate';
import { quantityNumber } from '../../lib/money';
import { describeInvoice, invoiceUpload, presentExtracted, readInvoicePdf, type ReadInvoice } from '../invoices/invoice-pdf';
import { INVOICE_UPLOAD_ERRORS } from '../invoices/invoices.routes';
import { ExtractedData, InvoiceUploadBody, StoredInvoice, UploadInvoiceResult } from '../invoices/invoices.schemas';
import { presentStoredInvoice } from '../invoices/invoices.service';
import { CSV_COLUMNS, JSON_TEMPLATE, csvTemplate, parsedDataFromCsv } from './order-import';
import {
  AddToInventory,
  CreateOrder,
  ImportFromInvoiceForm,
  ImportFromInvoiceJson,
  ImportMultipartFields,
  Order,
  OrderHistory,
  OrderListQuery,
  OrderParams,
  OrderWithItems,
  ParsedData,
  ReceiveOrder,
} from './orders.schemas';
import { DEFAULT_CATEGORY_SETTING, ordersService, presentOrder, presentOrderDetail } from './orders.service';

const notFound = 'Order not found';

const ImportResult = z
  .object({
    success: z.boolean(),
    message: z.string(),
    order: OrderWithItems,
    supplierCreated: z.boolean(),
    matchedItems: z.number().int(),
    unmatchedItems: z.number().int(),
    extractedData: ExtractedData.optional(),
  })
  .openapi('ImportFromInvoiceResult');

const ReceiveResult = z
  .object({
    message: z.string(),
    order: OrderWithItems,
    stockMovements: z.array(z.object({ itemId: z.number().int(), quantity: z.number(), previousStock: z.number(), newStock: z.number() })),
  })
  .openapi('ReceiveOrderResult');

const AddToInventoryResult = z
  .object({
    message: z.string(),
    createdItems: z.array(
      z.object({
        orderItemId: z.number().int(),
        item: z.object({ id: z.number().int(), name: z.string(), sku: z.string(), categoryId: z.number().int() }),
      }),
    ),
    order: OrderWithItems,
  })
  .openapi('AddToInventoryResult');

type UploadedFiles = Record<string, Express.Multer.File[]> | undefined;

export function ordersRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Orders');
  const orders = ordersService(db);

  /** The parsedData of a multipart import: from the PDF in `invoice` or the CSV in `csv`. */
  async function multipartImport(req: Request): Promise<{ data: ParsedData; pdf?: ReadInvoice }> {
    const fields = parse(ImportMultipartFields, req.body ?? {});
    const files = req.files as UploadedFiles;
    const pdfFile = files?.invoice?.[0];
    const csvFile = files?.csv?.[0];
    if (pdfFile && csvFile) throw BadRequest("Send either an invoice PDF ('invoice') or a CSV file ('csv'), not both");
    if (csvFile) {
      const fromCsv = parsedDataFromCsv(csvFile.buffer);
      return { data: parse(ParsedData, { ...fromCsv, ...defined(fields) }) };
    }
    if (!pdfFile) throw BadRequest("No file uploaded: send an invoice PDF in the field 'invoice' or a CSV file in the field 'csv'");
    const pdf = await readInvoicePdf(pdfFile);
    const supplier = fields.supplier ?? pdf.extracted.supplierName;
    if (!supplier) throw BadRequest("The supplier could not be read from the invoice: send its name in the field 'supplier'");
    if (pdf.extracted.items.length === 0) {
      throw BadRequest('No order lines could be read from the invoice: send the lines as JSON parsedData instead');
    }
    const data = parse(ParsedData, {
      supplier,
      invoiceNumber: fields.invoiceNumber ?? pdf.extracted.invoiceNumber ?? undefined,
      notes: fields.notes,
      items: pdf.extracted.items.map((i) => ({ name: i.name, quantity: i.quantity, unitCost: i.unitPrice })),
    });
    return { data, pdf };
  }

  api.get(
    '/orders',
    {
      summary: 'List purchase orders, newest first',
      description: 'Optional filters status and supplierId; at most `limit` orders (default 500, max 1000). Lines are not included.',
      access: 'auth',
      query: OrderListQuery,
      responses: { 200: { description: 'Orders', schema: z.array(Order) } },
    },
    async (req, res) => {
      const query = parse(OrderListQuery, req.query);
      res.json((await orders.list(query)).map(presentOrder));
    },
  );

  api.post(
    '/orders',
    {
      summary: 'Create a purchase order',
      description:
        'Each line names an item (itemId; name defaults to the item name) or is free text (name). quantity > 0 with at most ' +
        'two decimals; unitCost a decimal with at most two. totalAmount = sum of quantity x unitCost. The order starts pending. ' +
        'An unknown supplierId or itemId is a 400.',
      access: 'manager',
      body: CreateOrder,
      responses: { 201: { description: 'Created', schema: OrderWithItems }, 400: 'Validation failed, unknown supplier or item' },
    },
    async (req, res) => {
      const input = parse(CreateOrder, req.body);
      res.status(201).json(presentOrderDetail(await orders.create(input, currentUser(req).id)));
    },
  );

  api.get(
    '/orders/import-template/json',
    {
      summary: 'Download the JSON import template',
      description: 'A file with the exact body POST /api/orders/import-from-invoice accepts as JSON.',
      access: 'auth',
      responses: { 200: { description: 'order-import-template.json', schema: ImportFromInvoiceJson } },
    },
    (_req, res) => {
      res.attachment('order-import-template.json').type('application/json').send(JSON.stringify(JSON_TEMPLATE, null, 2));
    },
  );

  api.get(
    '/orders/import-template/csv',
    {
      summary: 'Download the CSV import template',
      description:
        `Columns ${CSV_COLUMNS.join(', ')}; one row per order line. supplier, invoiceNumber and notes are taken from the first row ` +
        "that has them. Send it back to POST /api/orders/import-from-invoice as multipart/form-data in the field 'csv'.",
      access: 'auth',
      responses: { 200: { description: 'order-import-template.csv', schema: z.string(), contentType: 'text/csv' } },
    },
    (_req, res) => {
      res.attachment('order-import-template.csv').type('text/csv').send(csvTemplate());
    },
  );

  api.post(
    '/orders/upload-invoice',
    {
      summary: 'Read an invoice PDF',
      description:
        "multipart/form-data with the PDF in the field `invoice` (at most 10 MB). The PDF is checked by content and its text " +
        'read; nothing is stored. Items carry unitPrice as a decimal string; fields that could not be read are null.',
      access: 'manager',
      formBody: InvoiceUploadBody,
      responses: { 200: { description: 'What was read', schema: UploadInvoiceResult }, ...INVOICE_UPLOAD_ERRORS },
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      res.json(await describeInvoice(req.file));
    },
  );

  api.post(
    '/orders/import-from-invoice',
    {
      summary: 'Create a pending order from an invoice',
      description:
        'Three forms. (1) JSON {parsedData {supplier, invoiceNumber?, notes?, items [{name, sku?, quantity, unitCost}]}} (the JSON ' +
        'template; supplierName/unitPrice as upload-invoice returns them are accepted too). (2) multipart/form-data with an ' +
        "invoice PDF in the field `invoice`: it is read as by upload-invoice and stored as the order's invoice. (3) " +
        'multipart/form-data with the filled-in CSV template in the field `csv`. Multipart text fields supplier, invoiceNumber ' +
        'and notes override what the file says. The supplier is matched by name case-insensitively or created (id derived ' +
        'from the name); each line is matched to an item by sku, then by exact name (case-insensitive), or stays free text. ' +
        'Answers 201 {success, message, order, supplierCreated, matchedItems, unmatchedItems, extractedData (PDF form only)}.',
      access: 'manager',
      body: ImportFromInvoiceJson,
      formBody: ImportFromInvoiceForm,
      responses: {
        201: { description: 'Order created', schema: ImportResult },
        400: 'Validation failed; no file; not a PDF or unreadable; nothing could be read from it',
        413: 'File larger than 10 MB',
      },
    },
    invoiceUpload.fields([
      { name: 'invoice', maxCount: 1 },
      { name: 'csv', maxCount: 1 },
    ]),
    async (req, res) => {
      const user = currentUser(req);
      const { data, pdf } = req.is('multipart/form-data')
        ? await multipartImport(req)
        : { data: parse(ImportFromInvoiceJson, req.body).parsedData, pdf: undefined };
      const result = await orders.importOrder(data, user.id, pdf);
      const order = presentOrderDetail(result.detail);
      res.status(201).json({
        success: true,
        message: `Order ${order.orderId} created with ${order.items.length} line(s), ${result.matchedItems} matched to inventory items`,
        order,
        supplierCreated: result.supplierCreated,
        matchedItems: result.matchedItems,
        unmatchedItems: result.unmatchedItems,
        ...(pdf ? { extractedData: presentExtracted(pdf.extracted) } : {}),
      });
    },
  );

  api.get(
    '/orders/:id',
    {
      summary: 'A purchase order with its lines',
      description: '{id} is the numeric id or the orderId (O1001). Lines carry orderItemId, ordered, received and outstanding quantities.',
      access: 'auth',
      params: OrderParams,
      responses: { 200: { description: 'Order', schema: OrderWithItems }, 400: 'Malformed id', 404: notFound },
    },
    async (req, res) => {
      const { id } = parse(OrderParams, req.params);
      res.json(presentOrderDetail(await orders.get(id)));
    },
  );

  api.post(
    '/orders/:id/receive',
    {
      summary: 'Receive goods against an order',
      description:
        'receivedItems [{orderItemId, receivedQuantity > 0 and at most what is outstanding, addToInventory (default true)}]. ' +
        'One transaction: lines with an item and addToInventory put stock in through the ledger (movement type in, reason ' +
        '"Received on order <orderId>", reference order). Status becomes received when every line is complete, otherwise ' +
        'partially_received. Lines without an item only record the quantity; POST /add-to-inventory creates their items. ' +
        'Receiving a received order is a 400.',
      access: 'manager',
      params: OrderParams,
      body: ReceiveOrder,
      responses: {
        200: { description: 'Received', schema: ReceiveResult },
        400: 'Validation failed, a line not of this order, more than outstanding, or the order is already received',
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = parse(OrderParams, req.params);
      const input = parse(ReceiveOrder, req.body);
      const { detail, movements } = await orders.receive(id, input, currentUser(req).id);
      const order = presentOrderDetail(detail);
      res.json({
        message: order.status === 'received' ? `Order ${order.orderId} fully received` : `Order ${order.orderId} partially received`,
        order,
        stockMovements: movements.map((m) => ({
          itemId: m.item_id!,
          quantity: quantityNumber(m.quantity),
          previousStock: quantityNumber(m.previous_stock),
          newStock: quantityNumber(m.new_stock),
        })),
      });
    },
  );

  api.post(
    '/orders/:id/add-to-inventory',
    {
      summary: 'Create inventory items for received lines that have none',
      description:
        'For each received line without an item (or only the orderItemIds given): creates an item named as the line, sku = the ' +
        'line sku when free, otherwise <orderId>-<orderItemId>; price = unit cost; category = categoryId from the body, ' +
        `otherwise the setting '${DEFAULT_CATEGORY_SETTING}' (a number or {categoryId}); 400 when neither. The received ` +
        'quantity goes in as stock through the ledger, the line is linked to the item, and the item is linked to the ' +
        'supplier at the unit cost. All in one transaction. Nothing to do answers 200 with createdItems [].',
      access: 'manager',
      params: OrderParams,
      body: AddToInventory,
      responses: {
        200: { description: 'Items created', schema: AddToInventoryResult },
        400: 'No category, or orderItemIds that are not received lines without an item',
        404: 'Order or category not found',
      },
    },
    async (req, res) => {
      const { id } = parse(OrderParams, req.params);
      const input = parse(AddToInventory, req.body ?? {});
      const { created, detail } = await orders.addToInventory(id, input, currentUser(req).id);
      res.json({
        message: created.length === 0 ? 'No received lines without an inventory item' : `Created ${created.length} inventory item(s)`,
        createdItems: created,
        order: presentOrderDetail(detail),
      });
    },
  );

  api.post(
    '/orders/:id/upload-invoice',
    {
      summary: "Attach the order's invoice PDF",
      description:
        "multipart/form-data with the PDF in the field `invoice` (at most 10 MB), checked and read as by upload-invoice, then " +
        "stored in the database; a new upload replaces the previous one. Sets the order's invoiceNumber when it has none. " +
        'Answers {success, message, invoice {orderId, filename, size, sha256, uploadedBy, uploadedAt}, extractedData}.',
      access: 'manager',
      params: OrderParams,
      formBody: InvoiceUploadBody,
      responses: {
        200: {
          description: 'Attached',
          schema: z.object({ success: z.boolean(), message: z.string(), invoice: StoredInvoice, extractedData: ExtractedData }),
        },
        ...INVOICE_UPLOAD_ERRORS,
        404: notFound,
      },
    },
    async (req, _res, next) => {
      // 404 before reading up to 10 MB for an order that does not exist
      await orders.resolve(parse(OrderParams, req.params).id);
      next();
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      const { id } = parse(OrderParams, req.params);
      const user = currentUser(req);
      const pdf = await readInvoicePdf(req.file);
      const { order, stored } = await orders.attachInvoice(id, pdf, user.id);
      res.json({
        success: true,
        message: `Invoice attached to order ${order.order_id}`,
        invoice: presentStoredInvoice(order.order_id, stored),
        extractedData: presentExtracted(pdf.extracted),
      });
    },
  );

  api.get(
    '/orders/:id/invoice-pdf',
    {
      summary: "Download the order's invoice PDF",
      description: 'The bytes uploaded, as application/pdf.',
      access: 'auth',
      params: OrderParams,
      responses: {
        200: { description: 'The PDF', schema: z.string().openapi({ type: 'string', format: 'binary' }), contentType: 'application/pdf' },
        404: 'Order not found, or no invoice attached',
      },
    },
    async (req, res) => {
      const { id } = parse(OrderParams, req.params);
      const invoice = await orders.invoicePdf(id);
      res.attachment(invoice.filename).type('application/pdf').send(invoice.data);
    },
  );

  api.get(
    '/items/:id/order-history',
    {
      summary: 'Orders that included the item, newest first',
      description: 'quantity is the ordered quantity, receivedQuantity what has arrived; unitCost as a JSON number; supplier is its name.',
      access: 'auth',
      params: IdParams,
      responses: { 200: { description: 'History', schema: OrderHistory }, 404: 'Item not found' },
    },
    async (req, res) => {
      const { id } = parse(IdParams, req.params);
      const rows = await orders.itemHistory(id);
      res.json({
        orders: rows.map((r) => ({
          orderId: r.order_id,
          orderDate: r.created_at.toISOString(),
          supplier: r.supplier,
          quantity: quantityNumber(r.quantity),
          receivedQuantity: quantityNumber(r.received_quantity),
          unitCost: Number(r.unit_cost),
          status: r.status,
        })),
      });
    },
  );

  return api.router;
}

function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
