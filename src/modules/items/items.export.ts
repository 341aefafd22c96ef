import type { Response } from 'express';
import type { Style } from 'exceljs';
import { refuseInactiveItemsBelowManager } from './items.policy';
import { quantityNumber } from '../../lib/money';
import { spreadsheetText as text } from '../../lib/spreadsheet-safe';
import type { ItemsBulkService } from './items.bulk';
import type { BulkExport } from './items.schemas';
import type { ItemExportRow } from './items.bulk';
import { BARCODE_SEPARATOR } from '../../lib/barcodes';
import { sendCsvDownload, xlsxCaughtUp } from '../../http/send-file';

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const COLUMNS = [
  'ID',
  'SKU',
  'Name',
  'Description',
  'Category',
  'Price',
  'VAT Rate',
  'Current Stock',
  'Minimum Stock',
  'Reorder Quantity',
  'Active',
  'Created At',
  'Barcodes',
  'Tracking',
  'Shelf Life Days',
  'Signal Word',
  'Pictograms',
  'H Statements',
  'P Statements',
  'CAS Number',
  'UN Number',
  'Hazard Storage',
  'COSHH Required',
  'Restricted',
];

/** An item's codes (pictograms, statements) in one cell, joined as its barcodes are; the import splits them again. */
const codes = (list: string[]) => list.join(EXPORT_BARCODE_SEPARATOR);

/** How an export joins an item's barcodes in one cell (the import splits a text on `|` and trims each code). */
export const EXPORT_BARCODE_SEPARATOR = ` ${BARCODE_SEPARATOR} `;

const downloadName = (extension: string) => `items-${new Date().toISOString().slice(0, 10)}.${extension}`;

function startDownload(res: Response, type: string, extension: string): void {
  const filename = downloadName(extension);
  res.status(200);
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  res.setHeader('Cache-Control', 'no-store');
}

/**
 * CSV, streamed: one page of items in memory at a time, with backpressure from the socket. Text
 * cells go through spreadsheetText (no formula injection); numbers are written as they are.
 */
export async function streamItemsCsv(res: Response, pages: AsyncIterable<ItemExportRow[]>): Promise<void> {
  async function* records() {
    for await (const page of pages) {
      for (const r of page) {
        yield [
          r.id,
          text(r.sku),
          text(r.name),
          text(r.description),
          text(r.category_name),
          r.price,
          r.vat_rate,
          r.current_stock,
          r.minimum_stock,
          r.reorder_quantity ?? '',
          r.is_active ? 'yes' : 'no',
          r.created_at.toISOString(),
          text(r.barcodes.join(EXPORT_BARCODE_SEPARATOR)),
          r.tracking,
          r.shelf_life_days ?? '',
          r.hazard_signal_word ?? '',
          codes(r.hazard_pictograms),
          codes(r.hazard_statements),
          codes(r.precautionary_statements),
          r.cas_number ?? '',
          r.un_number ?? '',
          text(r.hazard_storage),
          r.coshh_required ? 'yes' : 'no',
          r.restricted ? 'yes' : 'no',
        ];
      }
    }
  }
  await sendCsvDownload(res, { name: downloadName('csv'), columns: COLUMNS, records: records() });
}

const XLSX_COLUMNS: { header: string; key: string; width: number; style: Partial<Style> }[] = [
  { header: 'ID', key: 'id', width: 8, style: {} },
  { header: 'SKU', key: 'sku', width: 18, style: {} },
  { header: 'Name', key: 'name', width: 32, style: {} },
  { header: 'Description', key: 'description', width: 40, style: {} },
  { header: 'Category', key: 'category', width: 20, style: {} },
  { header: 'Price', key: 'price', width: 12, style: { numFmt: '0.00' } },
  { header: 'VAT Rate', key: 'vatRate', width: 10, style: { numFmt: '0.0000' } },
  { header: 'Current Stock', key: 'currentStock', width: 14, style: {} },
  { header: 'Minimum Stock', key: 'minimumStock', width: 14, style: {} },
  { header: 'Reorder Quantity', key: 'reorderQuantity', width: 16, style: {} },
  { header: 'Active', key: 'active', width: 8, style: {} },
  { header: 'Created At', key: 'createdAt', width: 24, style: {} },
  { header: 'Barcodes', key: 'barcodes', width: 32, style: {} },
  { header: 'Tracking', key: 'tracking', width: 10, style: {} },
  { header: 'Shelf Life Days', key: 'shelfLifeDays', width: 16, style: {} },
  { header: 'Signal Word', key: 'signalWord', width: 12, style: {} },
  { header: 'Pictograms', key: 'pictograms', width: 24, style: {} },
  { header: 'H Statements', key: 'hStatements', width: 32, style: {} },
  { header: 'P Statements', key: 'pStatements', width: 40, style: {} },
  { header: 'CAS Number', key: 'casNumber', width: 14, style: {} },
  { header: 'UN Number', key: 'unNumber', width: 10, style: {} },
  { header: 'Hazard Storage', key: 'hazardStorage', width: 32, style: {} },
  { header: 'COSHH Required', key: 'coshhRequired', width: 15, style: {} },
  { header: 'Restricted', key: 'restricted', width: 11, style: {} },
];

/**
 * XLSX through exceljs's streaming writer: rows are committed (flushed) as they are added. Text
 * cells go through spreadsheetText, as in the CSV; numbers are number cells. exceljs is loaded on
 * the first XLSX export: kept out of start-up, it leaves some 15 MB out of an idle server.
 */
export async function streamItemsXlsx(res: Response, pages: AsyncIterable<ItemExportRow[]>): Promise<void> {
  const { default: ExcelJS } = await import('exceljs');
  startDownload(res, XLSX_TYPE, 'xlsx');
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: res, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet('Items');
  sheet.columns = XLSX_COLUMNS.map(({ header, key, width }) => ({ header, key, width }));
  // One style object per column, assigned to every cell: exceljs resolves a style it has seen
  // before by identity, where the per-cell copies it makes otherwise cost a lookup and garbage each.
  const styles = XLSX_COLUMNS.map((c) => c.style);
  for await (const page of pages) {
    for (const r of page) {
      const row = sheet.addRow({
        id: r.id,
        sku: text(r.sku),
        name: text(r.name),
        description: text(r.description),
        category: text(r.category_name),
        price: Number(r.price),
        vatRate: Number(r.vat_rate),
        currentStock: quantityNumber(r.current_stock),
        minimumStock: quantityNumber(r.minimum_stock),
        reorderQuantity: r.reorder_quantity == null ? null : quantityNumber(r.reorder_quantity),
        active: r.is_active ? 'yes' : 'no',
        createdAt: r.created_at.toISOString(),
        barcodes: text(r.barcodes.join(EXPORT_BARCODE_SEPARATOR)),
        tracking: r.tracking,
        shelfLifeDays: r.shelf_life_days,
        signalWord: r.hazard_signal_word,
        pictograms: codes(r.hazard_pictograms),
        hStatements: codes(r.hazard_statements),
        pStatements: codes(r.precautionary_statements),
        casNumber: r.cas_number,
        unNumber: r.un_number,
        hazardStorage: text(r.hazard_storage),
        coshhRequired: r.coshh_required ? 'yes' : 'no',
        restricted: r.restricted ? 'yes' : 'no',
      });
      row.eachCell((cell, column) => {
        cell.style = styles[column - 1];
      });
      row.commit();
    }
    await xlsxCaughtUp(sheet, res);
    if (res.destroyed) return;
  }
  sheet.commit();
  await workbook.commit();
}

/**
 * An export as POST /api/items/bulk/export and the items page ask for it: the chosen items (all
 * must exist, 400 otherwise) or every active one (inactive too for managers who ask), streamed
 * in the chosen format.
 */
export async function sendItemsExport(
  res: Response,
  bulk: ItemsBulkService,
  body: BulkExport,
  user: Express.User,
): Promise<void> {
  refuseInactiveItemsBelowManager(user, body.includeInactive);
  const ids = body.itemIds ? await bulk.exportIds(body.itemIds) : undefined;
  const pages = bulk.exportPages({ ids, includeInactive: ids !== undefined || body.includeInactive });
  if (body.format === 'csv') await streamItemsCsv(res, pages);
  else await streamItemsXlsx(res, pages);
}
