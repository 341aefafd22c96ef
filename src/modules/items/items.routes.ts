import type { Deps } from '../../deps';
import { refuseInactiveItemsBelowManager } from './items.policy';
import { MANAGER_UNDER_STRICT, mayReadCostPrices } from '../../auth/access-profile';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { UnknownItemCode } from './items.unknown-code';
import { CsvText, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { IdParams } from '../../http/validate';
import { ItemMovementQuery, MovementList } from '../stock-movements/stock-movements.schemas';
import { itemsBulkService } from './items.bulk';
import { sendItemsExport, XLSX_TYPE } from './items.export';
import {
  BulkAddNote,
  BulkCategory,
  BulkExport,
  BulkIds,
  BulkImport,
  BulkResult,
  BulkVatRate,
  Barcode,
  BarcodeList,
  BarcodeParams,
  CreateItem,
  ItemDetail,
  LookupResult,
  LookupQuery,
  NewBarcode,
  ImportResult,
  Item,
  ItemDeleteRefused,
  ItemDeletionCheck,
  ItemList,
  ItemOrderHistory,
  ItemsExportFile,
  ItemQuery,
  StockChangeBody,
  StockChangeResult,
  UpdateItem,
} from './items.schemas';
import {
  presentBarcode,
  presentBulkOutcome,
  presentImportOutcome,
  presentItem,
  presentItemDeletionCheck,
  presentItemDetail,
  presentItemList,
  presentItemMovements,
  presentItemOrderHistory,
  presentStockChange,
} from './items.present';
import { itemsService, type ItemOrderHistoryRow } from './items.service';
import { actorOf } from '../audit/audit.actor';
import { itemBarcodesService } from './item-barcodes.service';
import { itemIdForCode } from './items.queries';
import { cleanScan } from '../../lib/gs1';
import { expiryWarningDays, lotIdByNumber, storesToday } from '../lots/lots.queries';
import { scannedLot } from '../../lib/barcodes';
import { presentLot } from '../lots/lots.present';
import { LotList, LotsOfItemQuery } from '../lots/lots.schemas';

const invalid = { description: 'Validation failed', schema: ValidationErrorBody };
const notFound = { description: 'Item not found', schema: MessageBody };
const bulkInvalid = {
  description:
    'itemIds missing, empty, not positive integers, more than 1000, or naming items that do not exist (listed in the message and missingIds; nothing is changed)',
  schema: MessageBody,
};

/**
 * An item's order history is read from the orders' tables, by the orders module; app.ts hands it
 * in, since the orders module imports this one.
 */
export type ItemOrderHistorySource = { itemHistory(itemId: number): Promise<ItemOrderHistoryRow[]> };

export function itemsRoutes({ db, docs }: Deps, orders: ItemOrderHistorySource) {
  const api = new ApiRouter({ docs, db }, '/api', 'Items');
  const items = itemsService(db);
  const bulk = itemsBulkService(db);
  const barcodes = itemBarcodesService(db);
  /** An item with its barcodes' codes, as GET /items/{id} and the lookup answer it. */
  const detail = async (id: number) => {
    const row = await items.get(id);
    return presentItemDetail(row, (await barcodes.codesOf([id])).get(id) ?? []);
  };

  // ---- static paths first ----------------------------------------------------------

  api.get(
    '/items/lookup',
    {
      operationId: 'lookupItem',
      summary: 'The item a scanned or typed code names',
      description:
        'Found by SKU (any case), by barcode, by the other form of a UPC-A/EAN-13/GTIN-14 (036000291452, 0036000291452 and ' +
        '00036000291452 are one code), or by the GTIN of a GS1 element string carrying AI (01): `(01)09501101530003(17)251231`, ' +
        'the same without parentheses with the FNC1/GS (\\x1d) separator, optionally after a symbology identifier (`]d2`, `]C1`, ' +
        "`]Q3`), or a GS1 Digital Link URL. The scanner's Enter and other control characters at either end are ignored. Answers " +
        'the item as GET /api/items/{id} does, plus `scanned`: the lot a GS1 element string carries, ' +
        "`{lotNumber: (10), expiresOn: (17) as YYYY-MM-DD or null, lotId: the item's lot of that number or null when new}`, " +
        'or null when the code carries no (10) lot (issue 42). ' +
        '404 {message: "No item with barcode \'<code>\'"} (the code trimmed of them).',
      access: 'auth',
      query: LookupQuery,
      responses: {
        200: { description: 'Item', schema: LookupResult },
        400: invalid,
        404: { description: 'No item answers to the code', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { code } = req.input.query;
      const id = await itemIdForCode(db, code);
      if (id === undefined) throw new UnknownItemCode(cleanScan(code).code);
      const lot = scannedLot(code);
      const scanned = lot ? { ...lot, lotId: (await lotIdByNumber(db, id, lot.lotNumber)) ?? null } : null;
      res.json({ ...(await detail(id)), scanned });
    },
  );

  api.post(
    '/items/bulk-import',
    {
      operationId: 'importItems',
      summary: 'Import items',
      description:
        'Up to 10,000 items per request (the JSON body may be up to 10 MB here). Each item is checked on its own: name, sku, categoryName, ' +
        'price and currentStock are required and non-empty; categoryName must match an existing category exactly, ignoring case; ' +
        'price and stocks must be non-negative numbers with at most 2 decimal places; sku must be unique (among existing items and earlier ' +
        'items of the same import). barcodes (optional: an array of codes, or a text of codes joined by `|`) are checked as ' +
        "POST /api/items/{id}/barcodes checks them: a wrong check digit, a code that is any item's SKU or barcode, or one given " +
        'earlier in the import fails the item with that message. tracking (none or lot) and shelfLifeDays are optional (issue 42); a lot-tracked ' +
        "item's opening stock goes into its lotNumber with its expiresOn (which may be past: the lot is expired at once), or into the lot " +
        'UNLOTTED with no expiry when no lotNumber is given; lotNumber and expiresOn on an item not tracked by lot fail it. ' +
        'The hazard columns (issue 43) are optional: signalWord, pictograms, hStatements, pStatements (each an array of codes, or a text ' +
        'of codes joined by `|`, `,` or `;`, as the export writes them), casNumber, unNumber and hazardStorage, checked as POST /api/items ' +
        'checks its hazard ("Unknown hazard statement \'<code>\'", "Invalid CAS number \'<cas>\'" fail the item); blank: no hazard data. ' +
        'A failing item does not affect the others. Each created item with stock gets an `in` movement ' +
        "('Initial stock (bulk import)'). errors[] holds one message per failed item, prefixed with its 1-based position: 'Item 3: ...'.",
      access: MANAGER_UNDER_STRICT,
      body: BulkImport,
      responses: { 200: { description: 'Import outcome', schema: ImportResult }, 400: invalid },
    },
    async (req, res) => {
      const body = req.input.body;
      res.json(presentImportOutcome(await bulk.import(body.items, currentUser(req).id)));
    },
  );

  api.post(
    '/items/bulk/delete',
    {
      operationId: 'bulkDeleteItems',
      summary: 'Permanently delete items',
      description:
        'All or nothing. Stock movements survive with itemId null (keeping item name and sku); notes on the items are removed. ' +
        'If another record must keep an item (a sold item: its sale lines), the request is refused with 409 and nothing is deleted; deactivate it instead.',
      access: 'manager',
      body: BulkIds,
      responses: {
        200: { description: 'Deleted', schema: BulkResult },
        400: bulkInvalid,
        409: { description: 'Referenced', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { itemIds } = req.input.body;
      res.json(presentBulkOutcome(await bulk.delete(itemIds, actorOf(req))));
    },
  );

  api.post(
    '/items/bulk/set-inactive',
    {
      operationId: 'bulkDeactivateItems',
      summary: 'Deactivate items (soft delete)',
      access: 'manager',
      body: BulkIds,
      responses: { 200: { description: 'Done', schema: BulkResult }, 400: bulkInvalid },
    },
    async (req, res) => {
      const { itemIds } = req.input.body;
      res.json(presentBulkOutcome(await bulk.setActive(itemIds, false, actorOf(req))));
    },
  );

  api.post(
    '/items/bulk/set-active',
    {
      operationId: 'bulkActivateItems',
      summary: 'Reactivate items',
      access: 'manager',
      body: BulkIds,
      responses: { 200: { description: 'Done', schema: BulkResult }, 400: bulkInvalid },
    },
    async (req, res) => {
      const { itemIds } = req.input.body;
      res.json(presentBulkOutcome(await bulk.setActive(itemIds, true, actorOf(req))));
    },
  );

  api.post(
    '/items/bulk/set-stock-zero',
    {
      operationId: 'bulkZeroItemStock',
      summary: 'Set stock to zero',
      description: 'Through the stock ledger: one adjustment movement for each item whose stock was not already zero.',
      access: 'manager',
      body: BulkIds,
      responses: { 200: { description: 'Done', schema: BulkResult }, 400: bulkInvalid },
    },
    async (req, res) => {
      const { itemIds } = req.input.body;
      res.json(presentBulkOutcome(await bulk.setStockZero(itemIds, currentUser(req).id)));
    },
  );

  api.post(
    '/items/bulk/export',
    {
      operationId: 'exportItems',
      summary: 'Export items as CSV or XLSX',
      description:
        'Body: itemIds (1..1000 ids, all must exist) or all: true (every active item; includeInactive: true adds inactive ones), ' +
        'and format csv or xlsx (default xlsx). Streamed; columns ID, SKU, Name, Description, Category, Price, VAT Rate, ' +
        "Current Stock, Minimum Stock, Reorder Quantity (empty when none), Active, Created At, Barcodes (the item's codes, oldest " +
        'first, joined by " | "; empty when none), Tracking, Shelf Life Days, and the hazard (issue 43): Signal Word, Pictograms, ' +
        'H Statements, P Statements (codes joined by " | "), CAS Number, UN Number, Hazard Storage; empty when none. Filename items-YYYY-MM-DD.<format>.',
      access: MANAGER_UNDER_STRICT,
      body: BulkExport,
      responses: {
        200: {
          description: 'The file (format=csv: text/csv)',
          contentType: XLSX_TYPE,
          schema: ItemsExportFile,
          otherContent: { 'text/csv': CsvText },
        },
        400: bulkInvalid,
      },
    },
    async (req, res) => {
      await sendItemsExport(res, bulk, req.input.body, currentUser(req));
    },
  );

  api.post(
    '/items/bulk/add-note',
    {
      operationId: 'bulkAddItemNote',
      summary: 'Add one note to each item',
      access: 'manager',
      body: BulkAddNote,
      responses: { 200: { description: 'Done', schema: BulkResult }, 400: bulkInvalid },
    },
    async (req, res) => {
      const { itemIds, noteText } = req.input.body;
      res.json(presentBulkOutcome(await bulk.addNote(itemIds, noteText, currentUser(req).id)));
    },
  );

  api.post(
    '/items/bulk/change-vat-rate',
    {
      operationId: 'bulkChangeItemVatRate',
      summary: "Set the items' own VAT rate",
      description: 'vatRate: a fraction 0..1 with at most 4 places (e.g. "0.0500").',
      access: 'manager',
      body: BulkVatRate,
      responses: { 200: { description: 'Done', schema: BulkResult }, 400: bulkInvalid },
    },
    async (req, res) => {
      const { itemIds, vatRate } = req.input.body;
      res.json(presentBulkOutcome(await bulk.changeVatRate(itemIds, vatRate, actorOf(req))));
    },
  );

  api.post(
    '/items/bulk/change-category',
    {
      operationId: 'bulkChangeItemCategory',
      summary: 'Move items to a category',
      access: 'manager',
      body: BulkCategory,
      responses: {
        200: { description: 'Done', schema: BulkResult },
        400: bulkInvalid,
        404: { description: 'Category not found', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { itemIds, categoryId } = req.input.body;
      res.json(presentBulkOutcome(await bulk.changeCategory(itemIds, categoryId, actorOf(req))));
    },
  );

  // ---- collection ----------------------------------------------------------------------

  api.get(
    '/items',
    {
      operationId: 'listItems',
      summary: 'List items',
      description:
        'Active items by name (includeInactive=true, managers and admins only, adds soft-deleted ones). search matches name, ' +
        'description and sku, case-insensitively. Every item embeds category {id, name, description, icon, color}; createdBy is ' +
        "the creator's user id and creator the same user as {id, email, firstName, lastName} (both on every item read). total counts all matches.",
      access: 'auth',
      query: ItemQuery,
      responses: {
        200: { description: 'A page of items', schema: ItemList },
        400: invalid,
        403: { description: 'includeInactive without the manager role', schema: MessageBody },
      },
    },
    async (req, res) => {
      const query = req.input.query;
      refuseInactiveItemsBelowManager(currentUser(req), query.includeInactive);
      res.json(presentItemList(await items.list(query)));
    },
  );

  api.post(
    '/items',
    {
      operationId: 'createItem',
      summary: 'Create an item',
      description:
        'currentStock and minimumStock default to 0; vatRate omitted or null means the default rate applies; reorderQuantity ' +
        'omitted or null means the replenishment target is twice minimumStock. Opening stock is ' +
        "recorded as an 'in' movement ('Initial stock'). hazard (issue 43): the GHS/CLP data, or omitted or null for none; each code and the " +
        'CAS check digit are checked: 400 {message: "Unknown hazard statement \'<code>\'"} or {message: "Invalid CAS number \'<cas>\'"}, with ' +
        "errors [{field, message}] naming the field (hazard.hStatements.1); pictograms GHS01 to GHS09 and unNumber four digits are 400 'Validation failed'. coshhRequired and restricted (issue 43) default to false. " +
        "409 when the sku is taken, or is another item's barcode (or its UPC-A/EAN-13 equivalent).",
      access: 'manager',
      body: CreateItem,
      responses: {
        201: { description: 'Created', schema: Item },
        400: invalid,
        409: { description: 'SKU taken', schema: MessageBody },
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentItem(await items.create(body, actorOf(req))));
    },
  );

  // ---- one item -----------------------------------------------------------------------

  api.get(
    '/items/:id',
    {
      operationId: 'getItem',
      summary: 'One item',
      access: 'auth',
      params: IdParams,
      description: "The item, with its barcodes' codes (barcodes: [...], oldest first).",
      responses: { 200: { description: 'Item', schema: ItemDetail }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(await detail(id));
    },
  );

  api.get(
    '/items/:id/barcodes',
    {
      operationId: 'listItemBarcodes',
      summary: "The item's barcodes, oldest first",
      access: 'auth',
      params: IdParams,
      responses: { 200: { description: 'Barcodes', schema: BarcodeList }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json((await barcodes.list(id)).map(presentBarcode));
    },
  );

  api.post(
    '/items/:id/barcodes',
    {
      operationId: 'addItemBarcode',
      summary: 'Add a barcode to the item',
      description:
        'kind is guessed from the code when absent: 13 digits ean13, 12 upca, 14 gtin14, other printable ASCII code128, ' +
        'anything else other. 400 {message: "Invalid check digit in \'<code>\'"} for an ean13, upca or gtin14 whose GS1 check digit ' +
        'is wrong (and 400 for one of the wrong length, control characters or a `|`). A code is unique across every ' +
        "item's SKU and barcodes, a UPC-A, its EAN-13 and GTIN-14 forms being one code: 409 {message: \"Barcode '<code>' already " +
        'belongs to <SKU> <name>"}. A scanned GS1 element string is stored as the GTIN-14 it carries. Audited (add_barcode).',
      access: 'manager',
      params: IdParams,
      body: NewBarcode,
      responses: {
        201: { description: 'Added', schema: Barcode },
        400: invalid,
        404: notFound,
        409: { description: 'The code already names an item', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.status(201).json(presentBarcode(await barcodes.add(id, req.input.body, actorOf(req))));
    },
  );

  api.delete(
    '/items/:id/barcodes/:barcodeId',
    {
      operationId: 'removeItemBarcode',
      summary: "Remove one of the item's barcodes",
      description: '404 when the item has no barcode of that id. Audited (remove_barcode).',
      access: 'manager',
      params: BarcodeParams,
      responses: { 204: 'Removed', 404: { description: 'Item or barcode not found', schema: MessageBody } },
    },
    async (req, res) => {
      const { id, barcodeId } = req.input.params;
      await barcodes.remove(id, barcodeId, actorOf(req));
      res.status(204).end();
    },
  );

  api.put(
    '/items/:id',
    {
      operationId: 'updateItem',
      summary: 'Update an item',
      description:
        'Partial: any of name, sku, description, categoryId, price, vatRate (null = follow the default), currentStock, minimumStock, ' +
        'reorderQuantity (null = the replenishment target is twice the minimum), isActive, tracking, shelfLifeDays, hazard (issue 43: the whole ' +
        'hazard data, replacing what the item had, a field left out cleared; null clears it; checked as POST /api/items checks it), coshhRequired and restricted (issue 43). A changed currentStock is recorded as an adjustment movement (reason stockReason, or a default) in the same ' +
        "transaction as the other changes. Answers 200 with the updated item; 400 validation (unknown categoryId too); 404; 409 sku taken or another item's barcode.",
      access: 'manager',
      params: IdParams,
      body: UpdateItem,
      responses: {
        200: { description: 'Updated', schema: Item },
        400: invalid,
        404: notFound,
        409: { description: 'SKU taken', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentItem(await items.update(id, body, actorOf(req))));
    },
  );

  api.delete(
    '/items/:id',
    {
      operationId: 'deactivateItem',
      summary: 'Soft-delete an item (isActive false)',
      access: 'manager',
      params: IdParams,
      responses: { 204: 'Deactivated', 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await items.deactivate(id, actorOf(req));
      res.status(204).end();
    },
  );

  api.post(
    '/items/:id/stock',
    {
      operationId: 'changeItemStock',
      summary: 'Change stock',
      description:
        'type in adds quantity, out removes it (400 "Insufficient stock for item ..." below zero, nothing written), adjustment ' +
        'sets the stock to quantity. Records a movement with previousStock and newStock. Answers {message, item, movement}.',
      access: 'manager',
      params: IdParams,
      body: StockChangeBody,
      responses: { 200: { description: 'Changed', schema: StockChangeResult }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      const { item, movement } = await items.changeStock(id, body, currentUser(req).id);
      res.json(presentStockChange(item, movement));
    },
  );

  api.get(
    '/items/:id/stock-movements',
    {
      operationId: 'listItemStockMovements',
      summary: "The item's stock movements, newest first",
      description:
        'Answers {movements: [...]} in the same shape as GET /api/stock-movements; limit defaults to 50, max 100.',
      access: 'auth',
      params: IdParams,
      query: ItemMovementQuery,
      responses: { 200: { description: 'Movements', schema: MovementList }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { limit } = req.input.query;
      res.json(presentItemMovements(await items.movements(id, limit)));
    },
  );

  api.get(
    '/items/:id/lots',
    {
      operationId: 'listItemLots',
      summary: "The item's lots, first expiry first",
      description:
        'Earliest expiry first, lots without expiry last, then by receipt (the order a sale takes them in). status is on ' +
        "today's date (UK): expiring within the setting lots.expiryWarningDays (unset 30). Lots that have run out only with " +
        'includeEmpty=true. An item not tracked by lot has none, or only the emptied lots of when it was.',
      access: 'auth',
      params: IdParams,
      query: LotsOfItemQuery,
      responses: { 200: { description: 'Lots', schema: LotList }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const rows = await items.lots(id, req.input.query.includeEmpty ?? false);
      const [today, warningDays] = [storesToday(), await expiryWarningDays(db)];
      res.json(rows.map((row) => presentLot(row, today, warningDays)));
    },
  );

  api.get(
    '/items/:id/order-history',
    {
      operationId: 'listItemOrderHistory',
      summary: 'Orders that included the item, newest first',
      description:
        'quantity is the ordered quantity, receivedQuantity what has arrived; unitCost as a JSON number; supplier is its name.',
      access: 'auth',
      params: IdParams,
      responses: { 200: { description: 'History', schema: ItemOrderHistory }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentItemOrderHistory(await orders.itemHistory(id), await mayReadCostPrices(db, currentUser(req))));
    },
  );

  api.get(
    '/items/:id/deletion-check',
    {
      operationId: 'checkItemDeletion',
      summary: 'Would a safe delete of this item succeed?',
      description: 'Lists what references the item: stock movements, quote/sale/order lines, supplier links, notes.',
      access: 'admin',
      params: IdParams,
      responses: { 200: { description: 'Check result', schema: ItemDeletionCheck }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentItemDeletionCheck(await items.deletionCheck(id)));
    },
  );

  api.delete(
    '/items/:id/safe',
    {
      operationId: 'deleteItemSafely',
      summary: 'Permanently delete an item only when nothing references it',
      description:
        'Answers 409 {message, reasons[]} when any movement, line, supplier link or note references the item.',
      access: 'admin',
      params: IdParams,
      responses: {
        204: 'Deleted',
        404: notFound,
        409: { description: 'Referenced; reasons listed', schema: ItemDeleteRefused },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await items.safeDelete(id);
      res.status(204).end();
    },
  );

  return api.router;
}
