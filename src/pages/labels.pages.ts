import type { Response, Router } from 'express';
import type { Deps } from '../deps';
import { PrintLabels } from '../modules/labels/labels.schemas';
import { MAX_LABELS, SYMBOLOGIES, labelsService, type LotLabelInfo } from '../modules/labels/labels.service';
import { attempt, checked, repeatedField, textField, type FieldErrors } from './forms';
import { safeNext } from './page-guards';
import { PageRouter } from './page-route';

/**
 * One line of a print form: an item, or one of its lots (issue 42: `lot` set), and how many labels.
 * Item lines come first, then lot lines, as the PDF prints them.
 */
export type LabelFormLine = {
  itemId: number;
  name: string;
  sku: string;
  copies: number | string;
  lot?: { lotId: number; lotNumber: string; expiresOn: string | null };
};

/** A lot of a print form with its item, as labelsService.lotsFor answers it, and its copies. */
const lotLine = (lot: LotLabelInfo, copies: number | string): LabelFormLine => ({
  itemId: lot.itemId,
  name: lot.name,
  sku: lot.sku,
  copies,
  lot: { lotId: lot.lotId, lotNumber: lot.lotNumber, expiresOn: lot.expiresOn },
});

/** A print form's state: its lines, the options chosen, what to fix, and where it was sent from. */
export type LabelForm = {
  lines: LabelFormLine[];
  values: { layout: string; symbology: string; startPosition: string; showPrice: boolean };
  errors: FieldErrors;
  message: string | null;
  layouts: { value: string; label: string }[];
  symbologies: { value: string; label: string }[];
  /** the page the form is on (where the labels page links back to) */
  returnTo: string;
};

const SYMBOLOGY_LABELS: Record<(typeof SYMBOLOGIES)[number], string> = {
  code128: 'Code 128 (any scanner)',
  qr: 'QR code (phones, 2D scanners)',
  datamatrix: 'Data Matrix (2D scanners)',
};

/** A fresh print form for these lines (the copies each line starts with are editable). */
export function labelForm(db: Deps['db'], lines: LabelFormLine[], returnTo: string): LabelForm {
  return {
    // item lines first, then lot lines: the order the form posts them in
    lines: [...lines.filter((line) => !line.lot), ...lines.filter((line) => line.lot)],
    values: { layout: 'avery-l7160', symbology: 'code128', startPosition: '1', showPrice: false },
    errors: {},
    message: null,
    layouts: labelsService(db)
      .layouts()
      .map((layout) => ({ value: layout.id, label: layout.name })),
    symbologies: SYMBOLOGIES.map((value) => ({ value, label: SYMBOLOGY_LABELS[value] })),
    returnTo,
  };
}

/**
 * A fresh print form for these items and copies, their names and SKUs read (ids of no item left
 * out), and lot lines already read (labelsService.lotsFor or lotsReceivedOn).
 */
export async function labelFormFor(
  db: Deps['db'],
  lines: { itemId: number; copies: number }[],
  returnTo: string,
  lots: (LotLabelInfo & { copies: number })[] = [],
): Promise<LabelForm> {
  const items = new Map((await labelsService(db).itemsFor(lines.map((line) => line.itemId))).map((i) => [i.id, i]));
  return labelForm(
    db,
    [
      ...lines.flatMap((line) => {
        const item = items.get(line.itemId);
        return item ? [{ itemId: item.id, name: item.name, sku: item.sku, copies: line.copies }] : [];
      }),
      ...lots.map((lot) => lotLine(lot, lot.copies)),
    ],
    returnTo,
  );
}

/**
 * An order's print form after receiving, a label a unit received: the lots first received on the
 * order (issue 42) as lot labels, the other items received as item labels.
 */
export async function labelFormForOrder(
  db: Deps['db'],
  order: { id: number; orderId: string; items: { itemId: number | null; receivedQuantity: number }[] },
): Promise<LabelForm> {
  const received = order.items.flatMap((line) =>
    line.itemId !== null && line.receivedQuantity > 0
      ? [{ itemId: line.itemId, copies: Math.ceil(line.receivedQuantity) }]
      : [],
  );
  const lots = received.length > 0 ? await labelsService(db).lotsReceivedOn(order) : [];
  const lotted = new Set(lots.map((lot) => lot.itemId));
  return labelFormFor(
    db,
    received.filter((line) => !lotted.has(line.itemId)),
    `/orders/${order.orderId}`,
    lots,
  );
}

/** A whole number typed in a form as the API's number (anything else goes as typed, for the schema to refuse). */
const wholeNumber = (typed: string): number | string => (/^\s*\d+\s*$/.test(typed) ? Number(typed) : typed);

/** The print form's settings as typed. */
const typedPrint = (body: Record<string, unknown>) => ({
  layout: textField(body.layout),
  symbology: textField(body.symbology) || 'code128',
  startPosition: textField(body.startPosition),
  showPrice: checked(body.showPrice),
});

/** The print form as the API's body: its settings, a line for each item and one for each lot, with their copies. */
function printRequest(body: Record<string, unknown>) {
  const copies = repeatedField(body.copies);
  const lotCopies = repeatedField(body.lotCopies);
  const values = typedPrint(body);
  return {
    layout: values.layout,
    symbology: values.symbology,
    startPosition: values.startPosition.trim() === '' ? undefined : wholeNumber(values.startPosition),
    showPrice: values.showPrice,
    items: repeatedField(body.itemId).map((id, index) => ({
      itemId: wholeNumber(id),
      copies: wholeNumber(copies[index] ?? ''),
    })),
    lots: repeatedField(body.lotId).map((id, index) => ({
      lotId: wholeNumber(id),
      copies: wholeNumber(lotCopies[index] ?? ''),
    })),
  };
}

/** Where a print form may send the person back to: one of the pages that hold one. */
function returnAddress(value: unknown): string {
  const href = safeNext(value);
  return /^\/(items|orders)(\/|\?|$)/.test(href) ? href : '/items';
}

/**
 * /labels: printing item labels from a page. The item page and an order hold the print form
 * (views/labels/_print-form.ejs); the items list's bulk action opens it for the items ticked. The
 * form posts to /labels/print, which answers the PDF as the API does (a download: the page stays),
 * or, refused, this page with the form again and what to fix.
 */
export function labelsPages({ db, config }: Deps): Router {
  const pages = new PageRouter(db);
  const labels = labelsService(db, config.publicUrl);

  const renderForm = (res: Response, form: LabelForm, status = 200) =>
    res.status(status).render('labels/index', {
      title: 'Print labels',
      stylesheets: ['/assets/css/labels.css'],
      labelForm: form,
      maxLabels: MAX_LABELS,
    });

  // the items list's bulk form: the ticked items, one label each to start with
  pages.post('/labels', { access: 'manager' }, async (req, res) => {
    const ids = [
      ...new Set(
        repeatedField(req.body.itemIds)
          .map(Number)
          .filter((id) => Number.isInteger(id) && id > 0),
      ),
    ];
    const items = await labels.itemsFor(ids.slice(0, MAX_LABELS));
    const form = labelForm(
      db,
      items.map((item) => ({ itemId: item.id, name: item.name, sku: item.sku, copies: 1 })),
      returnAddress(req.body.returnTo),
    );
    if (items.length === 0) {
      return renderForm(res, { ...form, message: 'Select at least one item in the table to print labels for' }, 422);
    }
    renderForm(res, form);
  });

  pages.post('/labels/print', { access: 'manager', form: PrintLabels, fromForm: printRequest }, async (req, res) => {
    const itemIds = repeatedField(req.body.itemId);
    const copies = repeatedField(req.body.copies);
    const lotIds = repeatedField(req.body.lotId);
    const lotCopies = repeatedField(req.body.lotCopies);
    const values = typedPrint(req.body);
    const result = await attempt(() => labels.prepare(req.input.form));
    if (result.ok) {
      const { filename, ...print } = result.value;
      res.attachment(filename).type('application/pdf');
      await labels.writePdf(print, res);
      return;
    }
    // refused: the form again, on its own page, with the lines as they were typed
    const ids = itemIds.map(Number).filter((id) => Number.isInteger(id) && id > 0);
    const known = new Map((await labels.itemsFor(ids.slice(0, MAX_LABELS))).map((item) => [item.id, item]));
    const lines: LabelFormLine[] = itemIds.flatMap((id, index) => {
      const item = known.get(Number(id));
      return item ? [{ itemId: item.id, name: item.name, sku: item.sku, copies: copies[index] ?? '' }] : [];
    });
    const lots = new Map(
      (
        await labels.lotsFor(
          lotIds
            .map(Number)
            .filter((id) => Number.isInteger(id) && id > 0)
            .slice(0, MAX_LABELS),
        )
      ).map((lot) => [lot.lotId, lot]),
    );
    for (const [index, id] of lotIds.entries()) {
      const lot = lots.get(Number(id));
      if (lot) lines.push(lotLine(lot, lotCopies[index] ?? ''));
    }
    const form = labelForm(db, lines, returnAddress(req.body.returnTo));
    renderForm(res, { ...form, values, errors: result.errors, message: result.message }, result.status);
  });

  return pages.router;
}
