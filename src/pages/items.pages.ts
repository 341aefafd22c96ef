import type { Request, Response, Router } from 'express';
import { mayReadCostPrices } from '../auth/access-profile';
import { z } from 'zod';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { NotFound } from '../http/errors';
import { formatQuantity, formatRate } from '../lib/format';
import { IdParams, IntId } from '../http/validate';
import { categoriesService } from '../modules/categories/categories.service';
import { CreateItem, ItemQuery, NewBarcode, StockChangeBody, UpdateItem } from '../modules/items/items.schemas';
import { presentBarcode, presentItem, presentItemOrderHistory } from '../modules/items/items.present';
import { itemBarcodesService } from '../modules/items/item-barcodes.service';
import { itemsService } from '../modules/items/items.service';
import { managesItems } from '../modules/items/items.policy';
import { UpdateNote } from '../modules/notes/notes.schemas';
import { notesService } from '../modules/notes/notes.service';
import { ordersService } from '../modules/orders/orders.service';
import { suppliersService } from '../modules/suppliers/suppliers.service';
import { presentMovement } from '../modules/stock-movements/stock-movements.present';
import { vatRatesService } from '../modules/vat-rates/vat-rates.service';
import { attempt, checked, filledIn, flash, textField, type FieldErrors } from './forms';
import { presentLot } from '../modules/lots/lots.present';
import { presentSafetyDataSheetList } from '../modules/safety-data-sheets/safety-data-sheets.present';
import { MAX_SDS_BYTES, SdsUploadFields } from '../modules/safety-data-sheets/safety-data-sheets.schemas';
import { safetyDataSheetsService } from '../modules/safety-data-sheets/safety-data-sheets.service';
import { lotActions, managesLots } from '../modules/lot-control/lot-control.service';
import { itemsBulkPages } from './items.bulk.pages';
import { itemsListQuery, itemsListView } from './items.list';
import { labelForm } from './labels.pages';
import { NOTE_FORM, notesSection } from './notes-section';
import { PageRouter, type PageRequest } from './page-route';
import { wantsPartial } from './page-render';
import { actorOf } from '../modules/audit/audit.actor';
import { PICTOGRAM_CODES } from '../modules/hazards/hazards.schemas';
import { hazardView, PICTOGRAM_NAMES, pictogramImage } from '../modules/hazards/hazards.service';

/** Movements on a page of an item's ledger. */
const MOVEMENTS_PER_PAGE = 20;

const MovementsPage = z.object({ before: IntId.optional() });
const NoteParams = z.object({ id: IntId, noteId: IntId });
const BarcodeParams = z.object({ id: IntId, barcodeId: IntId });
/** The add-barcode form as typed, and its state when the page shows it blank. */
const blankBarcodeForm = () => ({ values: { code: '', kind: '', note: '' }, errors: {} as FieldErrors, message: null });
/** The safety data sheet upload form as typed (issue 43); the file is never sent back. */
const typedSds = (body: Record<string, unknown>) => ({
  revisionDate: textField(body.revisionDate),
  language: textField(body.language),
  supplierId: textField(body.supplierId),
});
const blankSdsForm = () => ({
  values: { revisionDate: '', language: 'en', supplierId: '' },
  errors: {} as FieldErrors,
  message: null as string | null,
});

const ITEM_FIELDS = [
  'name',
  'sku',
  'description',
  'categoryId',
  'price',
  'vatRate',
  'currentStock',
  'minimumStock',
  'tracking',
  'shelfLifeDays',
] as const;
/** The hazard fields of the item form (issue 43), each a text but the pictograms' checkboxes. */
const HAZARD_FIELDS = ['signalWord', 'hStatements', 'pStatements', 'casNumber', 'unNumber', 'hazardStorage'] as const;
/** The item form as typed: every field a string (what is shown again beside its error), active a checkbox, the pictograms ticked. */
type ItemForm = Record<(typeof ITEM_FIELDS)[number] | (typeof HAZARD_FIELDS)[number], string> & {
  isActive: boolean;
  pictograms: string[];
};

function readItemForm(body: Record<string, unknown>): ItemForm {
  const typed = Object.fromEntries(
    [...ITEM_FIELDS, ...HAZARD_FIELDS].map((field) => [field, textField(body[field])]),
  ) as Record<(typeof ITEM_FIELDS)[number] | (typeof HAZARD_FIELDS)[number], string>;
  const ticked = body.pictograms;
  const pictograms = (Array.isArray(ticked) ? ticked : [ticked]).filter((v): v is string => typeof v === 'string');
  return { ...typed, isActive: checked(body.isActive), pictograms };
}

/** Codes typed in one box: separated by commas, semicolons, bars or spaces (spaces around a + kept together). */
const typedCodes = (text: string) =>
  text
    .replace(/\s*\+\s*/g, '+')
    .split(/[\s,;|]+/)
    .filter((code) => code !== '');

/** The hazard fields as the API's `hazard` (the whole object: the form always shows all of it). */
const hazardBody = (form: ItemForm) => ({
  signalWord: form.signalWord === '' ? null : form.signalWord,
  pictograms: form.pictograms,
  hStatements: typedCodes(form.hStatements),
  pStatements: typedCodes(form.pStatements),
  casNumber: form.casNumber,
  unNumber: form.unNumber,
  storage: form.hazardStorage,
});

/** The API's errors on `hazard.<field>[.<index>]` shown beside the form's hazard fields. */
const hazardFieldErrors = (errors: FieldErrors): FieldErrors =>
  Object.fromEntries(
    Object.entries(errors).map(([field, message]) => {
      const [head, name] = field.split('.');
      if (head !== 'hazard' || name === undefined) return [field, message];
      return [name === 'storage' ? 'hazardStorage' : name, message];
    }),
  );

/** The form as the API's body, so the API's schemas judge it: blanks mean "none" (or the default), the category is a number. */
const itemBody = (form: ItemForm) => ({
  name: form.name,
  sku: form.sku,
  description: form.description.trim() === '' ? null : form.description,
  categoryId: form.categoryId === '' ? undefined : Number(form.categoryId),
  price: form.price,
  vatRate: form.vatRate === '' ? null : form.vatRate,
  currentStock: form.currentStock === '' ? undefined : form.currentStock,
  minimumStock: form.minimumStock === '' ? undefined : form.minimumStock,
  isActive: form.isActive,
  tracking: form.tracking === '' ? undefined : form.tracking,
  // a whole number as a number; anything else as typed, for the schema's message
  shelfLifeDays:
    form.shelfLifeDays.trim() === ''
      ? null
      : /^\s*\d+\s*$/.test(form.shelfLifeDays)
        ? Number(form.shelfLifeDays)
        : form.shelfLifeDays,
  hazard: hazardBody(form),
});

/** The refusal to turn tracking by lot off while lots hold stock (items.service), shown beside the Tracking field. */
const TRACKING_OFF_REFUSED = 'Tracking by lot cannot be turned off';

/** The stock form as typed (the lot and its expiry only on a lot-tracked item's form). */
const typedStockChange = (body: Record<string, unknown>) => ({
  quantity: textField(body.quantity),
  type: textField(body.type),
  reason: textField(body.reason),
  lotNumber: textField(body.lotNumber),
  expiresOn: textField(body.expiresOn),
});

/** The stock form as the API's body: a blank lot or expiry is none given. */
const stockChangeBody = (body: Record<string, unknown>) => {
  const { lotNumber, expiresOn, ...rest } = typedStockChange(body);
  return { ...rest, ...filledIn({ lotNumber, expiresOn }) };
};

/** The add-barcode form as typed. */
const typedBarcode = (body: Record<string, unknown>) => ({
  code: textField(body.code),
  kind: textField(body.kind),
  note: textField(body.note),
});

function itemFormOf(item: ReturnType<typeof presentItem>): ItemForm {
  return {
    name: item.name,
    sku: item.sku,
    description: item.description ?? '',
    categoryId: String(item.categoryId),
    price: item.price,
    vatRate: item.usesDefaultVatRate ? '' : item.vatRate,
    currentStock: String(item.currentStock),
    minimumStock: String(item.minimumStock),
    isActive: item.isActive,
    tracking: item.tracking,
    shelfLifeDays: item.shelfLifeDays === null ? '' : String(item.shelfLifeDays),
    signalWord: item.hazard?.signalWord ?? '',
    pictograms: item.hazard?.pictograms ?? [],
    hStatements: (item.hazard?.hStatements ?? []).join(', '),
    pStatements: (item.hazard?.pStatements ?? []).join(', '),
    casNumber: item.hazard?.casNumber ?? '',
    unNumber: item.hazard?.unNumber ?? '',
    hazardStorage: item.hazard?.storage ?? '',
  };
}

/** /items and /items/{id}: the list, the item forms, the item page with its ledger, stock form and notes. */
export function itemsPages(deps: Deps): Router {
  const { db } = deps;
  const pages = new PageRouter(db);
  const items = itemsService(db);
  const listView = itemsListView(db);
  const categories = categoriesService(db);
  const vatRates = vatRatesService(db);
  const notes = notesService(db);
  const noteSection = notesSection(db);
  const orders = ordersService(db);
  const suppliers = suppliersService(db);
  const barcodes = itemBarcodesService(db);
  const sheets = safetyDataSheetsService(db);

  /** The item page's safety data sheets: the versions newest first, each with its supplier's name, and the upload form. */
  async function sdsView(id: number, form = blankSdsForm()) {
    const [rows, supplierRows] = await Promise.all([sheets.list(id), suppliers.list()]);
    const names = new Map(supplierRows.map((s) => [s.id, s.name]));
    return {
      rows: presentSafetyDataSheetList(rows).map((row) => ({
        ...row,
        supplierName: row.supplierId ? (names.get(row.supplierId) ?? row.supplierId) : null,
      })),
      suppliers: supplierRows.map((s) => ({ id: s.id, name: s.name })),
      form,
    };
  }

  // the items pages' manager buttons and forms: the policy the API's guards keep
  pages.use('/items', (req, res, next) => {
    res.locals.managesItems = req.user !== undefined && managesItems(req.user);
    res.locals.managesLots = req.user !== undefined && managesLots(req.user);
    next();
  });

  async function itemFormView(
    form: ItemForm,
    {
      title,
      action,
      errors = {},
      message = null,
    }: { title: string; action: string; errors?: FieldErrors; message?: string | null },
  ) {
    const [categoryRows, rates] = await Promise.all([categories.list(), vatRates.list()]);
    const defaultRate = rates.find((rate) => rate.is_default)?.rate;
    const vatOptions = [
      { value: '', label: `Default rate (${formatRate(defaultRate)})` },
      ...rates.map((rate) => ({ value: rate.rate, label: `${rate.name} (${formatRate(rate.rate)})` })),
    ];
    // an item may keep a rate that is no longer in the table; the form must not silently change it
    if (form.vatRate !== '' && !vatOptions.some((option) => option.value === form.vatRate)) {
      vatOptions.push({ value: form.vatRate, label: `This item's own rate (${form.vatRate})` });
    }
    return {
      title,
      stylesheets: ['/assets/css/items.css'],
      action,
      isNew: action === '/items',
      values: form,
      errors: hazardFieldErrors(errors),
      message,
      pictogramOptions: PICTOGRAM_CODES.map((code) => ({
        code,
        name: PICTOGRAM_NAMES[code],
        image: pictogramImage(code),
      })),
      categories: categoryRows,
      vatOptions,
    };
  }

  /** Everything the item page shows; a refused form re-renders it with its errors and what was typed. */
  async function detailView(
    req: Request,
    id: number,
    { before, overrides = {} }: { before?: number; overrides?: Record<string, unknown> } = {},
  ) {
    const user = currentUser(req);
    const [item, movements, noteRows, history, sourceRows, costPrices, barcodeRows, sds] = await Promise.all([
      items.get(id),
      movementsPage(id, before),
      noteSection.list(req, 'item', String(id), { editable: true }),
      orders.itemHistory(id),
      suppliers.sourcesOfItem(id),
      mayReadCostPrices(db, user),
      barcodes.list(id),
      sdsView(id),
    ]);
    const presented = presentItem(item);
    return {
      lots: presented.tracking === 'lot' ? await lotsView(id) : null,
      title: presented.name,
      stylesheets: ['/assets/css/items.css', '/assets/css/labels.css'],
      // the lots' actions ask as on /lots (a write-off cannot be undone): the one data-confirm script,
      // which asks for the barcodes' Remove and the notes' Delete here too
      scripts: ['/assets/js/lots.js'],
      item: presented,
      hazard: hazardView(presented.hazard),
      movements,
      notes: noteRows,
      orders: presentItemOrderHistory(history, costPrices).orders,
      sources: sourceRows.map((row) => ({
        supplierId: row.supplier_id,
        supplierName: row.supplier_name,
        price: costPrices ? row.price : null,
        notes: row.notes,
      })),
      costPrices,
      stock: {
        values: { quantity: '', type: 'in', reason: '', lotNumber: '', expiresOn: '' },
        errors: {},
        message: null,
      },
      note: { values: { text: '' }, errors: {}, message: null },
      editedNote: null,
      labelForm: labelForm(db, [{ itemId: id, name: presented.name, sku: presented.sku, copies: 1 }], `/items/${id}`),
      barcodes: { rows: barcodeRows.map(presentBarcode), form: blankBarcodeForm() },
      sds,
      ...overrides,
    };
  }

  /** A lot-tracked item's lots holding stock, first expiry first, with their status today. */
  async function lotsView(id: number) {
    const { rows, today, warningDays } = await items.lotsToday(id);
    // each lot with what may be done with it now (the lot-control service's rule)
    return {
      rows: rows.map((row) => ({ ...presentLot(row, today, warningDays), actions: lotActions(row) })),
      warningDays,
    };
  }

  /** One page of the item's ledger, newest first, and where the older page starts. */
  async function movementsPage(id: number, before: number | undefined) {
    const rows = await items.movements(id, MOVEMENTS_PER_PAGE + 1, before);
    const shown = rows.slice(0, MOVEMENTS_PER_PAGE);
    const olderFrom = rows.length > MOVEMENTS_PER_PAGE ? shown[shown.length - 1].id : null;
    return { itemId: id, rows: shown.map(presentMovement), isFirstPage: before === undefined, olderFrom };
  }

  const renderDetail = async (
    req: Request,
    res: Response,
    { id, status, overrides }: { id: number; status: number; overrides: Record<string, unknown> },
  ) => res.status(status).render('items/show', await detailView(req, id, { overrides }));

  pages.get('/items', { access: 'user', query: ItemQuery, fromQuery: itemsListQuery }, async (req, res) => {
    const view = await listView(req, req.input.query);
    res.render(wantsPartial(req) ? 'items/_rows' : 'items/index', view);
  });

  pages.get('/items/new', { access: 'manager' }, async (_req, res) => {
    const blank = readItemForm({ isActive: 'true', tracking: 'none' });
    res.render('items/form', await itemFormView(blank, { title: 'New item', action: '/items' }));
  });

  pages.post(
    '/items',
    { access: 'manager', form: CreateItem, fromForm: (body) => itemBody(readItemForm(body)) },
    async (req, res) => {
      const form = readItemForm(req.body);
      const result = await attempt(() => items.create(req.input.form, actorOf(req)));
      if (!result.ok)
        return res.status(result.status).render(
          'items/form',
          await itemFormView(form, {
            title: 'New item',
            action: '/items',
            errors: result.errors,
            message: result.message,
          }),
        );
      flash(req, `Item '${result.value.name}' created`);
      res.redirect(303, `/items/${result.value.id}`);
    },
  );

  // Literal paths (/items/new above, import, export, bulk) before /items/:id.
  pages.router.use(itemsBulkPages(deps));

  pages.get('/items/:id', { access: 'user', params: IdParams, query: MovementsPage }, async (req, res) => {
    const { id } = req.input.params;
    res.render('items/show', await detailView(req, id, { before: req.input.query.before }));
  });

  /** The ledger's pages for htmx; without it, the item page shows the same page of movements. */
  pages.get('/items/:id/movements', { access: 'user', params: IdParams, query: MovementsPage }, async (req, res) => {
    const { id } = req.input.params;
    const { before } = req.input.query;
    if (!wantsPartial(req))
      return res.redirect(302, before === undefined ? `/items/${id}` : `/items/${id}?before=${before}#stock-movements`);
    res.render('items/_movements', { movements: await movementsPage(id, before) });
  });

  pages.get('/items/:id/edit', { access: 'manager', params: IdParams }, async (req, res) => {
    const { id } = req.input.params;
    const item = presentItem(await items.get(id));
    res.render(
      'items/form',
      await itemFormView(itemFormOf(item), { title: `Edit ${item.name}`, action: `/items/${id}` }),
    );
  });

  pages.post(
    '/items/:id',
    { access: 'manager', params: IdParams, form: UpdateItem, fromForm: (body) => itemBody(readItemForm(body)) },
    async (req, res) => {
      const { id } = req.input.params;
      const form = readItemForm(req.body);
      const result = await attempt(() => items.update(id, req.input.form, actorOf(req)));
      if (!result.ok) {
        const title = `Edit ${(await items.get(id)).name}`;
        // the 409 of turning tracking off while lots hold stock belongs to the Tracking field
        const trackingRefused = result.status === 409 && result.message.startsWith(TRACKING_OFF_REFUSED);
        const errors = trackingRefused ? { ...result.errors, tracking: result.message } : result.errors;
        const message = trackingRefused ? 'Please correct the fields marked below' : result.message;
        return res
          .status(result.status)
          .render('items/form', await itemFormView(form, { title, action: `/items/${id}`, errors, message }));
      }
      flash(req, `Item '${result.value.name}' saved`);
      res.redirect(303, `/items/${id}`);
    },
  );

  // The API's POST /api/items/:id/stock: managers, the ledger's rules and refusals.
  pages.post(
    '/items/:id/stock',
    { access: 'manager', params: IdParams, form: StockChangeBody, fromForm: stockChangeBody },
    async (req, res) => {
      const { id } = req.input.params;
      const values = typedStockChange(req.body);
      const result = await attempt(() => items.changeStock(id, req.input.form, currentUser(req).id));
      if (!result.ok)
        return renderDetail(req, res, {
          id,
          status: result.status,
          overrides: {
            stock: { values, errors: result.errors, message: result.message },
          },
        });
      const { movement } = result.value;
      flash(
        req,
        `Stock changed from ${formatQuantity(movement.previous_stock)} to ${formatQuantity(movement.new_stock)}`,
      );
      res.redirect(303, `/items/${id}#stock-movements`);
    },
  );

  // Barcodes (issue 31): the API's POST and DELETE /api/items/:id/barcodes, for managers; a refused
  // code comes back in the form with the API's message beside it.
  pages.post(
    '/items/:id/barcodes',
    {
      access: 'manager',
      params: IdParams,
      form: NewBarcode,
      fromForm: (body) => {
        const values = typedBarcode(body);
        return { code: values.code, kind: values.kind || undefined, note: values.note.trim() || null };
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const values = typedBarcode(req.body);
      const result = await attempt(() => barcodes.add(id, req.input.form, actorOf(req)));
      if (!result.ok) {
        const errors = Object.keys(result.errors).length > 0 ? result.errors : { code: result.message };
        const rows = (await barcodes.list(id)).map(presentBarcode);
        return renderDetail(req, res, {
          id,
          status: result.status,
          overrides: {
            barcodes: {
              rows,
              form: { values, errors, message: Object.keys(result.errors).length > 0 ? result.message : null },
            },
          },
        });
      }
      flash(req, `Barcode '${result.value.code}' added`);
      res.redirect(303, `/items/${id}#barcodes`);
    },
  );

  pages.post(
    '/items/:id/barcodes/:barcodeId/delete',
    { access: 'manager', params: BarcodeParams },
    async (req, res) => {
      const { id, barcodeId } = req.input.params;
      await barcodes.remove(id, barcodeId, actorOf(req));
      flash(req, 'Barcode removed');
      res.redirect(303, `/items/${id}#barcodes`);
    },
  );

  // Safety data sheets (issue 43): the API's POST /api/items/:id/sds for managers; a refused upload
  // comes back in the form with the API's message beside its field (a file that is no PDF beside the file).
  pages.post(
    '/items/:id/sds',
    { access: 'manager', params: IdParams, upload: { field: 'file', maxBytes: MAX_SDS_BYTES, maxFieldBytes: 1024 } },
    async (req, res) => {
      const { id } = req.input.params;
      const values = typedSds(req.body as Record<string, unknown>);
      const result = await attempt(async () =>
        sheets.upload(id, SdsUploadFields.parse(filledIn(values)), req.file, currentUser(req).id),
      );
      if (!result.ok) {
        const listed = Object.keys(result.errors).length > 0;
        const errors = listed ? result.errors : { file: result.message };
        const form = { values, errors, message: listed ? result.message : null };
        return renderDetail(req, res, { id, status: result.status, overrides: { sds: await sdsView(id, form) } });
      }
      flash(req, `Safety data sheet revised ${result.value.revision_date} uploaded`);
      res.redirect(303, `/items/${id}#safety-data-sheets`);
    },
  );

  // Notes: anyone signed in adds one; only its author or an admin changes it (the notes service decides, as for the API).
  pages.post('/items/:id/notes', { access: 'user', params: IdParams, ...NOTE_FORM }, async (req, res) => {
    const { id } = req.input.params;
    const refused = await noteSection.add(req, 'item', String(id));
    if (refused) return renderDetail(req, res, { id, status: refused.status, overrides: { note: refused } });
    res.redirect(303, `/items/${id}#notes`);
  });

  /** The note, when it is one of this item's (a note of another record is not found here). */
  async function itemNote(req: PageRequest<{ readonly params: z.output<typeof NoteParams> }>) {
    const { id, noteId } = req.input.params;
    const note = await notes.getRead(noteId);
    if (note.reference_type !== 'item' || note.reference_id !== String(id)) throw NotFound('Note not found');
    return { id, noteId };
  }

  pages.post(
    '/items/:id/notes/:noteId',
    { access: 'user', params: NoteParams, form: UpdateNote, fromForm: (body) => ({ text: textField(body.text) }) },
    async (req, res) => {
      const { id, noteId } = await itemNote(req);
      const values = { text: textField(req.body.text) };
      const result = await attempt(() => notes.update(noteId, req.input.form.text, currentUser(req)));
      if (!result.ok)
        return renderDetail(req, res, {
          id,
          status: result.status,
          overrides: {
            editedNote: { id: noteId, values, errors: result.errors, message: result.message },
          },
        });
      flash(req, 'Note saved');
      res.redirect(303, `/items/${id}#notes`);
    },
  );

  pages.post('/items/:id/notes/:noteId/delete', { access: 'user', params: NoteParams }, async (req, res) => {
    const { id, noteId } = await itemNote(req);
    await notes.remove(noteId, currentUser(req));
    flash(req, 'Note deleted');
    res.redirect(303, `/items/${id}#notes`);
  });

  return pages.router;
}
