import type { Deps } from '../../deps';
import { MANAGER_UNDER_STRICT, mayReadCostPrices } from '../../auth/access-profile';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { parse } from '../../http/validate';
import { readMatchedInvoice } from '../invoices/invoices.matching';
import { invoiceUpload } from '../invoices/invoices.pdf';
import { presentInvoiceRead } from '../invoices/invoices.present';
import { INVOICE_UPLOAD_ERRORS, InvoiceUploadBody, UploadInvoiceResult } from '../invoices/invoices.schemas';
import { CSV_COLUMNS, JSON_TEMPLATE, csvTemplate, orderImportService, type ImportFiles } from './orders.import';
import {
  presentAddToInventoryResult,
  presentAttachedInvoice,
  presentImportResult,
  presentOrderDetail,
  presentOrderList,
  presentReceiveResult,
} from './orders.present';
import { DEFAULT_CATEGORY_SETTING, orderReceiptService } from './orders.receive';
import { actorOf } from '../audit/audit.actor';
import {
  AddToInventory,
  AddToInventoryResult,
  AttachInvoiceResult,
  CreateOrder,
  ImportFromInvoiceForm,
  ImportFromInvoiceJson,
  ImportFromInvoiceResult,
  ImportMultipartFields,
  InvoicePdfFile,
  OrderImportCsvTemplate,
  OrderList,
  OrderListQuery,
  OrderParams,
  OrderWithItems,
  ReceiveOrder,
  ReceiveOrderResult,
} from './orders.schemas';
import { DELIVERY_ADDRESS_SETTING, purchaseOrderService } from './orders.purchase-order';
import { ordersService } from './orders.service';
import { ORDER_MANAGERS } from './orders.policy';

const notFound = { description: 'Order not found', schema: MessageBody };
/** An error answer's documentation: the description and the {message} body. */
const failure = (description: string) => ({ description, schema: MessageBody });

export function ordersRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Orders');
  const orders = ordersService(db);
  const receipts = orderReceiptService(db);
  const imports = orderImportService(db);
  const purchaseOrders = purchaseOrderService(db);

  api.get(
    '/orders',
    {
      operationId: 'listOrders',
      summary: 'List purchase orders, newest first',
      description:
        'Optional filters status and supplierId; at most `limit` orders (default 500, max 1000). Lines are not included.',
      access: 'auth',
      query: OrderListQuery,
      responses: { 200: { description: 'Orders', schema: OrderList } },
    },
    async (req, res) => {
      const query = req.input.query;
      res.json(presentOrderList(await orders.list(query), await mayReadCostPrices(db, currentUser(req))));
    },
  );

  api.post(
    '/orders',
    {
      operationId: 'createOrder',
      summary: 'Create a purchase order',
      description:
        'Each line names an item (itemId; name defaults to the item name) or is free text (name). quantity > 0 with at most ' +
        'two decimals; unitCost a decimal with at most two. totalAmount = sum of quantity x unitCost. The order starts pending. ' +
        'An unknown supplierId or itemId is a 400.',
      access: ORDER_MANAGERS,
      body: CreateOrder,
      responses: {
        201: { description: 'Created', schema: OrderWithItems },
        400: failure('Validation failed, unknown supplier or item'),
      },
    },
    async (req, res) => {
      const input = req.input.body;
      res.status(201).json(presentOrderDetail(await orders.create(input, currentUser(req).id)));
    },
  );

  api.get(
    '/orders/import-template/json',
    {
      operationId: 'getOrderImportTemplateJson',
      summary: 'Download the JSON import template',
      description: 'A file with the exact body POST /api/orders/import-from-invoice accepts as JSON.',
      access: 'auth',
      responses: { 200: { description: 'order-import-template.json', schema: ImportFromInvoiceJson } },
    },
    (_req, res) => {
      res
        .attachment('order-import-template.json')
        .type('application/json')
        .send(JSON.stringify(JSON_TEMPLATE, null, 2));
    },
  );

  api.get(
    '/orders/import-template/csv',
    {
      operationId: 'getOrderImportTemplateCsv',
      summary: 'Download the CSV import template',
      description:
        `Columns ${CSV_COLUMNS.join(', ')}; one row per order line. supplier, invoiceNumber and notes are taken from the first row ` +
        "that has them. Send it back to POST /api/orders/import-from-invoice as multipart/form-data in the field 'csv'.",
      access: 'auth',
      responses: {
        200: { description: 'order-import-template.csv', schema: OrderImportCsvTemplate, contentType: 'text/csv' },
      },
    },
    async (_req, res) => {
      res
        .attachment('order-import-template.csv')
        .type('text/csv')
        .send(await csvTemplate());
    },
  );

  api.post(
    '/orders/upload-invoice',
    {
      operationId: 'readOrderInvoice',
      summary: 'Read an invoice PDF',
      description:
        'multipart/form-data with the PDF in the field `invoice` (at most 10 MB). The PDF is checked by content and its text ' +
        'read; nothing is stored. Items carry unitPrice as a decimal string; fields that could not be read are null. Each line ' +
        "also carries the supplier's part number read from it (supplierSku) and the item it names (match: exact by the part " +
        "number of one of the supplier's item sources, by name with or without the part number, or by SKU; else probable by " +
        'a similar name, for review); supplierId is the existing supplier of supplierName.',
      access: ORDER_MANAGERS,
      formBody: InvoiceUploadBody,
      responses: { 200: { description: 'What was read', schema: UploadInvoiceResult }, ...INVOICE_UPLOAD_ERRORS },
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      res.json(presentInvoiceRead(await readMatchedInvoice(db, req.file, currentUser(req).id)));
    },
  );

  api.post(
    '/orders/import-from-invoice',
    {
      operationId: 'createOrderFromInvoice',
      summary: 'Create a pending order from an invoice',
      description:
        'Three forms. (1) JSON {parsedData {supplier, invoiceNumber?, notes?, items [{name, sku?, quantity, unitCost}]}} (the JSON ' +
        'template; supplierName/unitPrice as upload-invoice returns them are accepted too). (2) multipart/form-data with an ' +
        "invoice PDF in the field `invoice`: it is read as by upload-invoice and stored as the order's invoice. (3) " +
        'multipart/form-data with the filled-in CSV template in the field `csv`. Multipart text fields supplier, invoiceNumber ' +
        'and notes override what the file says. The supplier is matched by name case-insensitively or created (id derived ' +
        "from the name); each line is matched to an item by its sku (an item's SKU, or the supplier's part number), else by " +
        "the supplier's part number in its name, its name with or without that part number (case and spacing ignored), or an " +
        "item's SKU in its name, or stays free text (a merely similar name, which upload-invoice shows as probable, is not " +
        "used). Each matched item gets the supplier as a source at the line's unitCost, with the line's part number. " +
        'Answers 201 {success, message, order, supplierCreated, matchedItems, unmatchedItems, extractedData (PDF form only)}.',
      access: ORDER_MANAGERS,
      body: ImportFromInvoiceJson,
      formBody: ImportFromInvoiceForm,
      responses: {
        201: { description: 'Order created', schema: ImportFromInvoiceResult },
        400: failure('Validation failed; no file; not a PDF or unreadable; nothing could be read from it'),
        413: failure('File larger than 10 MB'),
        422: INVOICE_UPLOAD_ERRORS[422],
        429: INVOICE_UPLOAD_ERRORS[429],
      },
    },
    invoiceUpload.fields([
      { name: 'invoice', maxCount: 1 },
      { name: 'csv', maxCount: 1 },
    ]),
    async (req, res) => {
      const user = currentUser(req);
      const result = req.is('multipart/form-data')
        ? await imports.fromUpload(parse(ImportMultipartFields, req.body ?? {}), req.files as ImportFiles, user.id)
        : await imports.fromParsedData(req.input.body.parsedData, user.id);
      res.status(201).json(presentImportResult(result));
    },
  );

  api.get(
    '/orders/:id',
    {
      operationId: 'getOrder',
      summary: 'A purchase order with its lines',
      description:
        '{id} is the numeric id or the orderId (O1001). Lines carry orderItemId, ordered, received and outstanding quantities.',
      access: 'auth',
      params: OrderParams,
      responses: {
        200: { description: 'Order', schema: OrderWithItems },
        400: { description: 'Malformed id', schema: ValidationErrorBody },
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentOrderDetail(await orders.get(id), await mayReadCostPrices(db, currentUser(req))));
    },
  );

  api.post(
    '/orders/:id/receive',
    {
      operationId: 'receiveOrder',
      summary: 'Receive goods against an order',
      description:
        'receivedItems [{orderItemId, receivedQuantity > 0 and at most what is outstanding, addToInventory (default true)}]. ' +
        'One transaction: lines with an item and addToInventory put stock in through the ledger (movement type in, reason ' +
        '"Received on order <orderId>", reference order). Status becomes received when every line is complete, otherwise ' +
        'partially_received. Receiving a cancelled order is a 400. A line without an item, received into inventory with a sku (optional fields sku, price, ' +
        'categoryId), becomes a new item in the same transaction: named as the line, that sku (unique: 409 naming the ' +
        "field when taken), price as given or the unit cost with the default markup (setting 'purchasing.defaultMarkup' " +
        `{percent}, unset 0), category as given or the setting '${DEFAULT_CATEGORY_SETTING}'; all that has arrived on the line ` +
        "(this receipt and any earlier one) is its stock, and it is linked to the order's supplier at the unit cost. Without a sku such a line only records the " +
        'quantity, and POST /add-to-inventory can create its item later. Receiving a received order is a 400. ' +
        'A lot-tracked item (issue 42) received into inventory takes lots [{lotNumber, expiresOn?, quantity}] adding up to ' +
        'receivedQuantity (400 naming receivedItems.<i>.lots otherwise); without lots it is 400 {message: "Lot number is required for <SKU>"}. ' +
        "Each lot goes in as one movement; a new lot records the order's id and supplier; an expiresOn in the past is 400 naming " +
        "receivedItems.<i>.lots.<j>.expiresOn; without one a new lot expires the item's shelfLifeDays from today, or never. " +
        'The same lot received again adds to it; a different expiresOn is 409 naming the lot. lots on a line of an untracked ' +
        'item, or on one not received into inventory, is 400 naming the field.',
      access: ORDER_MANAGERS,
      params: OrderParams,
      body: ReceiveOrder,
      responses: {
        200: { description: 'Received', schema: ReceiveOrderResult },
        400: failure(
          'Validation failed (lots not adding up, an expiry in the past), a line not of this order, more than outstanding, ' +
            'a lot-tracked line without lots, or the order is already received',
        ),
        404: notFound,
        409: failure("A new item's SKU is already used, or a lot the item has is received with another expiry"),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const input = req.input.body;
      res.json(presentReceiveResult(await receipts.receive(id, input, actorOf(req))));
    },
  );

  api.post(
    '/orders/:id/cancel',
    {
      operationId: 'cancelOrder',
      summary: 'Cancel a purchase order while nothing on it is received',
      description:
        'Status becomes cancelled (an audit row records who and when); replenishment no longer counts its lines as on order, ' +
        'and it can no longer be received. 409 once any line has been received, or when it is already cancelled.',
      access: ORDER_MANAGERS,
      params: OrderParams,
      responses: {
        200: { description: 'Cancelled', schema: OrderWithItems },
        404: notFound,
        409: failure('An order with received lines cannot be cancelled; or it is already cancelled'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentOrderDetail(await orders.cancel(id, actorOf(req))));
    },
  );

  api.post(
    '/orders/:id/add-to-inventory',
    {
      operationId: 'addOrderToInventory',
      summary: 'Create inventory items for received lines that have none',
      description:
        'For each received line without an item (or only the lines of items or orderItemIds): creates an item named as the ' +
        'line with the sku and price given in items [{orderItemId, sku, price?}] (a taken sku is a 409 naming items.<n>.sku); ' +
        'without them sku = the line sku when free, otherwise <orderId>-<orderItemId>, and price = the unit cost with the ' +
        "default markup (setting 'purchasing.defaultMarkup' {percent}, unset 0); category = categoryId from the body, " +
        `otherwise the setting '${DEFAULT_CATEGORY_SETTING}' (a number or {categoryId}); 400 when neither. The received ` +
        'quantity goes in as stock through the ledger, the line is linked to the item, and the item is linked to the ' +
        'supplier at the unit cost. All in one transaction. Nothing to do answers 200 with createdItems [].',
      access: ORDER_MANAGERS,
      params: OrderParams,
      body: AddToInventory,
      omittedBodyIsEmpty: true,
      responses: {
        200: { description: 'Items created', schema: AddToInventoryResult },
        400: failure('No category, or orderItemIds that are not received lines without an item'),
        404: failure('Order or category not found'),
        409: failure('A SKU given is already used'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const input = req.input.body;
      res.json(presentAddToInventoryResult(await receipts.addToInventory(id, input, actorOf(req))));
    },
  );

  api.post(
    '/orders/:id/upload-invoice',
    {
      operationId: 'attachOrderInvoice',
      summary: "Attach the order's invoice PDF",
      description:
        'multipart/form-data with the PDF in the field `invoice` (at most 10 MB), checked and read as by upload-invoice, then ' +
        "stored in the database; a new upload replaces the previous one. Sets the order's invoiceNumber when it has none. " +
        'Answers {success, message, invoice {orderId, filename, size, sha256, uploadedBy, uploadedAt}, extractedData}.',
      access: ORDER_MANAGERS,
      params: OrderParams,
      formBody: InvoiceUploadBody,
      responses: {
        200: { description: 'Attached', schema: AttachInvoiceResult },
        ...INVOICE_UPLOAD_ERRORS,
        404: notFound,
      },
    },
    async (req, _res, next) => {
      // 404 before reading up to 10 MB for an order that does not exist
      await orders.resolve(req.input.params.id);
      next();
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentAttachedInvoice(await orders.attachInvoice(id, req.file, currentUser(req).id)));
    },
  );

  api.get(
    '/orders/:id/invoice-pdf',
    {
      operationId: 'downloadOrderInvoice',
      summary: "Download the order's invoice PDF",
      description:
        'The bytes uploaded, as application/pdf, named invoice-<orderId>.pdf (whatever the uploaded file was called).',
      access: MANAGER_UNDER_STRICT,
      params: OrderParams,
      responses: {
        200: { description: 'The PDF', schema: InvoicePdfFile, contentType: 'application/pdf' },
        404: failure('Order not found, or no invoice attached'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const invoice = await orders.invoicePdf(id);
      // named by the order, never by the uploader: a stored 'x<script>.html' would keep its extension
      res.attachment(`invoice-${invoice.orderId}.pdf`).type('application/pdf').send(invoice.data);
    },
  );

  api.get(
    '/orders/:id/purchase-order.pdf',
    {
      operationId: 'downloadPurchaseOrder',
      summary: 'The purchase order as a PDF, to send the supplier',
      description:
        "An A4 PDF: the supplier (name, contact, address, email, phone), the order number and date, each line (the supplier's part number from its item source, our SKU, " +
        "description, quantity, unit cost, line total), the total, and where to deliver (the setting '" +
        `${DELIVERY_ADDRESS_SETTING}' {address, contact}; not set, the service's name). It prints cost prices, so it follows them: ` +
        'anyone signed in, a manager under access.profile strict.',
      access: MANAGER_UNDER_STRICT,
      params: OrderParams,
      responses: {
        200: { description: 'purchase-order-<orderId>.pdf', schema: InvoicePdfFile, contentType: 'application/pdf' },
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { filename, pdf } = await purchaseOrders.render(id);
      res.attachment(filename).type('application/pdf').send(pdf);
    },
  );

  return api.router;
}
