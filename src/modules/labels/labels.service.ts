import type { Db } from '../../db/knex';
import { BadRequest } from '../../http/errors';
import { D } from '../../lib/money';
import { formatMoney } from '../../lib/format';
import { categoriesService } from '../categories/categories.service';
import { findItemsForLines } from '../items/items.queries';
import {
  LABEL_LAYOUTS,
  MAX_LABELS,
  SYMBOLOGIES,
  isSymbology,
  labelLayout,
  labelsPerPage,
  type LabelLayout,
} from './labels.layouts';
import { linearSymbolFits, writeLabelsPdf, type LabelContent, type LabelPrint } from './labels.render';
import type { Writable } from 'node:stream';
import type { PrintLabels } from './labels.schemas';
import { labelSymbol, loadBwip } from './labels.symbols';

/** How long encoding may hold the event loop before it lets other requests run (ms). */
const SLICE_MS = 15;

/** What the pages show of the limits and choices. */
export { MAX_LABELS, SYMBOLOGIES };

/** A refusal that names the field it is about, as a validation error does. */
const refuse = (field: string, message: string) => BadRequest(message, { errors: [{ field, message }] });

/** The price lines a label may show, longest first: before VAT (as the item page shows it) and with it. */
export function priceLines(price: string, vatRate: string): string[] {
  const exVat = `${formatMoney(price)} ex VAT`;
  const incVat = formatMoney(new D(price).times(new D(1).plus(vatRate)).toDecimalPlaces(2));
  return [`${exVat} (${incVat} inc)`, exVat];
}

/** A name for the PDF download: the SKU when one item is printed, else how many items. */
function filenameOf(labels: LabelContent[]): string {
  const skus = new Set(labels.map((label) => label.sku));
  if (skus.size === 1) {
    const safe = [...skus][0]
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 60);
    if (safe !== '') return `labels-${safe}.pdf`;
  }
  return `labels-${new Set(labels.map((label) => label.itemId)).size}-items.pdf`;
}

export function labelsService(db: Db) {
  return {
    layouts(): readonly LabelLayout[] {
      return LABEL_LAYOUTS;
    },

    /** Writes a prepared print to `out` (an HTTP response) as a PDF, page by page. */
    writePdf(print: LabelPrint, out: Writable): Promise<void> {
      return writeLabelsPdf(print, out);
    },

    /** The items of these ids, in the order asked (ids of no item left out): what a print form lists. */
    async itemsFor(ids: number[]): Promise<{ id: number; name: string; sku: string }[]> {
      const items = await findItemsForLines(db, ids);
      return ids.flatMap((id) => {
        const item = items.get(id);
        return item ? [{ id, name: item.name, sku: item.sku }] : [];
      });
    },

    /**
     * What a print request draws, checked whole before a byte of PDF is written: the layout, the
     * symbology, the start position on the first sheet, the number of labels and every item.
     */
    async prepare(input: PrintLabels): Promise<LabelPrint & { filename: string }> {
      const layout = labelLayout(input.layout);
      if (!layout) {
        throw refuse(
          'layout',
          `Unknown layout '${input.layout}' (one of ${LABEL_LAYOUTS.map((l) => l.id).join(', ')})`,
        );
      }
      const symbology = input.symbology ?? 'code128';
      if (!isSymbology(symbology)) {
        throw refuse('symbology', `Unknown symbology '${symbology}' (one of ${SYMBOLOGIES.join(', ')})`);
      }
      const perPage = labelsPerPage(layout);
      const startPosition = input.startPosition ?? 1;
      if (startPosition > perPage) {
        throw refuse(
          'startPosition',
          perPage === 1
            ? `startPosition must be 1 for layout '${layout.id}' (one label a page)`
            : `startPosition must be between 1 and ${perPage} for layout '${layout.id}'`,
        );
      }
      const total = input.items.reduce((sum, line) => sum + line.copies, 0);
      if (total > MAX_LABELS) {
        throw refuse(
          'items',
          `At most ${MAX_LABELS.toLocaleString('en-GB')} labels a request (asked for ${total.toLocaleString('en-GB')})`,
        );
      }
      const items = await findItemsForLines(
        db,
        input.items.map((line) => line.itemId),
      );
      const missing = input.items.findIndex((line) => !items.has(line.itemId));
      if (missing >= 0) throw refuse(`items.${missing}.itemId`, `No item with id ${input.items[missing].itemId}`);
      const categories = new Map((await categoriesService(db).list()).map((c) => [c.id, c.name]));

      const bwipjs = await loadBwip();
      let sliceStart = performance.now();
      const contents = new Map<number, LabelContent>();
      const labels: LabelContent[] = [];
      for (const [index, line] of input.items.entries()) {
        let content = contents.get(line.itemId);
        if (!content) {
          const item = items.get(line.itemId)!;
          if (performance.now() - sliceStart > SLICE_MS) {
            // 2,000 new QR codes take seconds of CPU: the other requests get their turn between slices
            await new Promise((resolve) => setImmediate(resolve));
            sliceStart = performance.now();
          }
          let symbol;
          try {
            symbol = labelSymbol(bwipjs, symbology, item.sku);
          } catch (err) {
            throw refuse(`items.${index}.itemId`, (err as Error).message);
          }
          if (!linearSymbolFits(layout, symbol)) {
            throw refuse(
              `items.${index}.itemId`,
              `SKU '${item.sku}' is too long for a Code 128 that scans on ${layout.id} labels: choose qr or datamatrix`,
            );
          }
          content = {
            itemId: item.id,
            name: item.name,
            sku: item.sku,
            categoryName: categories.get(item.categoryId) ?? '',
            price: input.showPrice ? priceLines(item.price, item.vatRate) : [],
            symbol,
          };
          contents.set(item.id, content);
        }
        for (let copy = 0; copy < line.copies; copy += 1) labels.push(content);
      }
      return {
        layout,
        startPosition,
        labels,
        title: `Labels (${labels.length}, ${layout.name})`,
        filename: filenameOf(labels),
      };
    },
  };
}
