import type { Db } from '../../db/knex';
import { BadRequest } from '../../http/errors';
import { D } from '../../lib/money';
import { formatMoney } from '../../lib/format';
import { categoriesService } from '../categories/categories.service';
import { findItemsForLines, itemGtins, itemHazardsForLabels, type ItemForLine } from '../items/items.queries';
import { statementText } from '../hazards/hazards.service';
import { lotsForLabels, lotsReceivedOnOrder } from '../lots/lots.queries';
import { lotsReceivedBy } from '../stock-movements/stock-movements.ledger';
import { lotElementString, type LabelLot } from './labels.gs1';
import {
  LABEL_LAYOUTS,
  MAX_LABELS,
  SYMBOLOGIES,
  isSymbology,
  labelLayout,
  labelsPerPage,
  type LabelLayout,
} from './labels.layouts';
import { hazardBandSide, linearSymbolFits, writeLabelsPdf, type LabelContent, type LabelPrint } from './labels.render';
import type { Writable } from 'node:stream';
import type { PrintLabels } from './labels.schemas';
import { labelSymbol, loadBwip } from './labels.symbols';

/** How long encoding may hold the event loop before it lets other requests run (ms). */
const SLICE_MS = 15;

/** Statement codes with their standard texts (issue 43), as a hazard label prints them. */
const labelStatements = (codes: readonly string[]) => codes.map((code) => ({ code, text: statementText(code) ?? '' }));

/** What the pages show of the limits and choices. */
export { MAX_LABELS, SYMBOLOGIES };

/** A lot a print form lists: the lot and its item. */
export type LotLabelInfo = {
  lotId: number;
  itemId: number;
  name: string;
  sku: string;
  lotNumber: string;
  expiresOn: string | null;
};

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

/**
 * `publicUrl` (config PUBLIC_URL): a hazardous item's label carries a QR code of
 * `<publicUrl>/items/<id>/sds`, which opens its current safety data sheet after sign-in (issue 43).
 */
export function labelsService(db: Db, publicUrl = '') {
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
     * The lots of these ids with their items, in the order asked (ids of no lot left out): what a
     * print form lists for lot labels.
     */
    async lotsFor(ids: number[]): Promise<LotLabelInfo[]> {
      const lots = await lotsForLabels(db, ids);
      const items = await findItemsForLines(
        db,
        [...lots.values()].map((lot) => lot.itemId),
      );
      return ids.flatMap((id) => {
        const lot = lots.get(id);
        const item = lot && items.get(lot.itemId);
        return lot && item
          ? [
              {
                lotId: id,
                itemId: item.id,
                name: item.name,
                sku: item.sku,
                lotNumber: lot.lotNumber,
                expiresOn: lot.expiresOn,
              },
            ]
          : [];
      });
    },

    /**
     * The lots an order's receipts put stock into (`id`: its numeric id; `orderId`: its number, the
     * movements' reference): those first received on it and those first received on another order
     * that it added to, with one label a unit its receipts put into each (a part unit counts as one;
     * a lot first received on it whose receipt left no record of its share, one a unit it holds, at
     * least one). A sale since does not lower the count: the bottles received still need labels.
     */
    async lotsReceivedOn(order: { id: number; orderId: string }): Promise<(LotLabelInfo & { copies: number })[]> {
      const received = await lotsReceivedBy(db, { type: 'order', id: order.orderId });
      const lots = await lotsReceivedOnOrder(db, order.id, [...received.keys()]);
      const items = await findItemsForLines(
        db,
        lots.map((lot) => lot.itemId),
      );
      return lots.flatMap((lot) => {
        const item = items.get(lot.itemId);
        if (!item) return [];
        const units = Math.max(1, Math.ceil(Number(received.get(lot.id) ?? lot.quantity)));
        return [
          {
            lotId: lot.id,
            itemId: item.id,
            name: item.name,
            sku: item.sku,
            lotNumber: lot.lotNumber,
            expiresOn: lot.expiresOn,
            copies: Math.min(units, MAX_LABELS),
          },
        ];
      });
    },

    /**
     * What a print request draws, checked whole before a byte of PDF is written: the layout, the
     * symbology, the start position on the first sheet, the number of labels, every item and every lot.
     * Item labels come first, then lot labels, each line's copies in the order asked.
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
      const itemLines = input.items ?? [];
      const lotLines = input.lots ?? [];
      const total = [...itemLines, ...lotLines].reduce((sum, line) => sum + line.copies, 0);
      if (total > MAX_LABELS) {
        throw refuse(
          itemLines.length > 0 ? 'items' : 'lots',
          `At most ${MAX_LABELS.toLocaleString('en-GB')} labels a request (asked for ${total.toLocaleString('en-GB')})`,
        );
      }
      const lots = await lotsForLabels(
        db,
        lotLines.map((line) => line.lotId),
      );
      const unknownLot = lotLines.findIndex((line) => !lots.has(line.lotId));
      if (unknownLot >= 0) throw refuse(`lots.${unknownLot}.lotId`, `No lot with id ${lotLines[unknownLot].lotId}`);
      const lotItemIds = [...lots.values()].map((lot) => lot.itemId);
      const allItemIds = [...itemLines.map((line) => line.itemId), ...lotItemIds];
      const [items, gtins, categoryList, hazards] = await Promise.all([
        findItemsForLines(db, allItemIds),
        itemGtins(db, lotItemIds),
        categoriesService(db).list(),
        itemHazardsForLabels(db, allItemIds),
      ]);
      const missing = itemLines.findIndex((line) => !items.has(line.itemId));
      if (missing >= 0) throw refuse(`items.${missing}.itemId`, `No item with id ${itemLines[missing].itemId}`);
      const categories = new Map(categoryList.map((c) => [c.id, c.name]));

      const bwipjs = await loadBwip();
      let sliceStart = performance.now();
      const contents = new Map<string, LabelContent>();
      /** the label of an item or a lot, drawn once for all its copies (`field`: the line a refusal names) */
      const contentOf = async (
        key: string,
        field: string,
        item: ItemForLine,
        lot?: LabelLot,
      ): Promise<LabelContent> => {
        const known = contents.get(key);
        if (known) return known;
        if (performance.now() - sliceStart > SLICE_MS) {
          // 2,000 new QR codes take seconds of CPU: the other requests get their turn between slices
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
        const gtin = lot && gtins.get(item.id);
        const elementString = gtin && lot ? lotElementString(gtin, lot) : undefined;
        // a lot label: GS1 DataMatrix when the item has a GTIN, else Code 128 of the SKU (the symbology asked is for items)
        const [kind, text] = elementString
          ? (['gs1datamatrix', elementString] as const)
          : ([lot ? 'code128' : symbology, item.sku] as const);
        let symbol;
        try {
          symbol = labelSymbol(bwipjs, kind, text);
        } catch (err) {
          throw refuse(field, (err as Error).message);
        }
        if (!linearSymbolFits(layout, symbol)) {
          throw refuse(
            field,
            lot
              ? `SKU '${item.sku}' is too long for a Code 128 that scans on ${layout.id} labels: choose a larger label, or give the item a GTIN barcode`
              : `SKU '${item.sku}' is too long for a Code 128 that scans on ${layout.id} labels: choose qr or datamatrix`,
          );
        }
        const hazard = hazards.get(item.id);
        let hazardContent: LabelContent['hazard'];
        if (hazard) {
          if (hazardBandSide(layout, hazard.pictograms.length) === undefined) {
            throw refuse(
              field,
              `${item.sku} has ${hazard.pictograms.length} hazard pictograms: ${layout.id} labels cannot print them 10 mm wide; choose a larger label or a roll`,
            );
          }
          hazardContent = {
            signalWord: hazard.signalWord,
            pictograms: hazard.pictograms,
            hStatements: labelStatements(hazard.hStatements),
            pStatements: labelStatements(hazard.pStatements),
            sdsSymbol: labelSymbol(bwipjs, 'qr', `${publicUrl}/items/${item.id}/sds`),
          };
        }
        const content: LabelContent = {
          itemId: item.id,
          name: item.name,
          sku: item.sku,
          categoryName: categories.get(item.categoryId) ?? '',
          price: input.showPrice ? priceLines(item.price, item.vatRate) : [],
          symbol,
          ...(lot ? { lot: { lotNumber: lot.lotNumber, expiresOn: lot.expiresOn } } : {}),
          ...(hazardContent ? { hazard: hazardContent } : {}),
        };
        contents.set(key, content);
        return content;
      };

      const labels: LabelContent[] = [];
      for (const [index, line] of itemLines.entries()) {
        const content = await contentOf(`item ${line.itemId}`, `items.${index}.itemId`, items.get(line.itemId)!);
        for (let copy = 0; copy < line.copies; copy += 1) labels.push(content);
      }
      for (const [index, line] of lotLines.entries()) {
        const lot = lots.get(line.lotId)!;
        const content = await contentOf(`lot ${lot.id}`, `lots.${index}.lotId`, items.get(lot.itemId)!, lot);
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
