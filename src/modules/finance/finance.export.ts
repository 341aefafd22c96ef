import type { Response } from 'express';
import type { Style, Worksheet } from 'exceljs';
import { sendCsvDownload, xlsxCaughtUp } from '../../http/send-file';
import { money } from '../../lib/money';
import { spreadsheetText as text } from '../../lib/spreadsheet-safe';
import type { BatchRow, JournalPeriod, JournalRow } from './finance.batches';
import type { RechargeFilter } from './finance.schemas';
import type { RechargeFigures, RechargeGroupRow, RechargeLineRow, RechargeReportRecord } from './finance.service';

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export const SUMMARY_COLUMNS = ['Cost centre', 'Charge code', 'Sales', 'Net', 'VAT', 'Gross', 'Paid', 'Unpaid'];
export const LINE_COLUMNS = [
  'Date',
  'Sale',
  'Cost centre',
  'Charge code',
  'Item',
  'SKU',
  'Quantity',
  'Unit price',
  'Net',
  'VAT',
  'Gross',
  'Refunded quantity',
  'Net after refunds',
  'VAT after refunds',
  'Gross after refunds',
];
/** The first nine as before the ledger's columns (a reader by position keeps working); Account code, Debit and Credit after them. */
export const JOURNAL_COLUMNS = [
  'Date',
  'Batch',
  'Cost centre',
  'Charge code',
  'Sale ID',
  'Description',
  'Net',
  'VAT',
  'Gross',
  'Account code',
  'Debit',
  'Credit',
];

// Cells: text through spreadsheetText (no formula injection); amounts as decimal strings in CSV
// (a negative refund stays a number: only text cells are neutralised) and number cells in XLSX.
const summaryCells = (g: RechargeGroupRow) => [
  text(g.cost_centre),
  text(g.charge_code),
  g.sales,
  money(g.net),
  money(g.vat),
  money(g.gross),
  money(g.paid),
  money(g.unpaid),
];
const summaryTotalCells = (t: RechargeFigures) => [
  'Total',
  '',
  t.sales,
  money(t.net),
  money(t.vat),
  money(t.gross),
  money(t.paid),
  money(t.unpaid),
];
const lineCells = (l: RechargeLineRow) => [
  l.date,
  text(l.sale_id),
  text(l.cost_centre),
  text(l.charge_code),
  text(l.item_name),
  text(l.item_sku),
  l.quantity,
  l.unit_price,
  l.subtotal,
  l.vat_amount,
  l.total_with_vat,
  l.refunded_quantity,
  l.net_after,
  l.vat_after,
  l.gross_after,
];
/** The lines' totals are the report's: a sale's amounts are the sums of its rounded lines, and so are its refunds. */
const lineTotalCells = (t: RechargeFigures) => [
  'Total',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  money(t.soldNet),
  money(t.soldVat),
  money(t.soldGross),
  '',
  money(t.net),
  money(t.vat),
  money(t.gross),
];

/** The UTC day of a filter's date or timestamp. */
const dayOf = (dateOrTimestamp: string) => new Date(dateOrTimestamp).toISOString().slice(0, 10);

/** Named by the period the report covers: from its `from` ("start" without one) to its `to` (today without one: the report runs up to now). */
const reportName = ({ from, to }: RechargeFilter, extension: string, lines: boolean) =>
  `recharges${lines ? '-lines' : ''}-${from ? dayOf(from) : 'start'}_${dayOf(to ?? new Date().toISOString())}.${extension}`;

/**
 * The report as CSV, streamed with backpressure: without lines, one row per cost centre and charge
 * code; with lines, one row per sale line. A last row "Total" either way.
 */
export async function streamRechargeCsv(
  res: Response,
  report: RechargeReportRecord,
  lines: AsyncIterable<RechargeLineRow[]> | null,
): Promise<void> {
  async function* records() {
    if (lines) {
      for await (const batch of lines) for (const l of batch) yield lineCells(l);
      yield lineTotalCells(report.totals);
    } else {
      for (const g of report.groups) yield summaryCells(g);
      yield summaryTotalCells(report.totals);
    }
  }
  await sendCsvDownload(res, {
    name: reportName(report.filter, 'csv', lines !== null),
    columns: lines ? LINE_COLUMNS : SUMMARY_COLUMNS,
    records: records(),
  });
}

/** The decimal strings of the amount columns (from firstAmount on) become number cells; text and counts stay as they are. */
const xlsxCells = (cells: (string | number)[], firstAmount: number) =>
  cells.map((c, i) => (i >= firstAmount && typeof c === 'string' && c !== '' ? Number(c) : c));

/**
 * The report as XLSX through exceljs's streaming writer (loaded on first use): a sheet
 * "Recharges" (per cost centre and charge code, then Total), and with lines a sheet "Lines".
 */
export async function streamRechargeXlsx(
  res: Response,
  report: RechargeReportRecord,
  lines: AsyncIterable<RechargeLineRow[]> | null,
): Promise<void> {
  const { default: ExcelJS } = await import('exceljs');
  res.status(200).set({
    'Content-Type': XLSX_TYPE,
    'Content-Disposition': `attachment; filename="${reportName(report.filter, 'xlsx', lines !== null)}"`,
    'Cache-Control': 'no-store',
  });
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: res, useStyles: true, useSharedStrings: false });
  // One style object per column, assigned to every cell: exceljs resolves a style it has seen by
  // identity, where a column style is copied into every cell (garbage per cell), as in the items export.
  const amount: Partial<Style> = { numFmt: '0.00' };
  const plain: Partial<Style> = {};
  const addRows = (sheet: Worksheet, rows: (string | number)[][], firstAmount: number, styles: Partial<Style>[]) => {
    for (const cells of rows) {
      const row = sheet.addRow(xlsxCells(cells, firstAmount));
      row.eachCell((cell, column) => {
        cell.style = styles[column - 1];
      });
      row.commit();
    }
  };

  const summary = workbook.addWorksheet('Recharges');
  summary.columns = SUMMARY_COLUMNS.map((header, i) => ({ header, width: i < 2 ? 24 : 14 }));
  const summaryStyles = SUMMARY_COLUMNS.map((_, i) => (i >= 3 ? amount : plain));
  addRows(summary, [...report.groups.map(summaryCells), summaryTotalCells(report.totals)], 3, summaryStyles);
  summary.commit();

  if (lines) {
    const sheet = workbook.addWorksheet('Lines');
    sheet.columns = LINE_COLUMNS.map((header, i) => ({ header, width: [0, 4].includes(i) ? 28 : 16 }));
    const lineStyles = LINE_COLUMNS.map((_, i) => (i >= 6 ? amount : plain));
    for await (const batch of lines) {
      addRows(sheet, batch.map(lineCells), 6, lineStyles);
      await xlsxCaughtUp(sheet, res);
      if (res.destroyed) return;
    }
    addRows(sheet, [lineTotalCells(report.totals)], 6, lineStyles);
    sheet.commit();
  }
  await workbook.commit();
}

/**
 * A batch's journal for the ledger: a row per entry and account code in batch order (cost centre,
 * charge code, date), no totals row (the rows sum to the batch); named by the batch and the period
 * it covers.
 */
export async function streamJournalCsv(
  res: Response,
  batch: BatchRow,
  period: JournalPeriod,
  entries: AsyncIterable<JournalRow[]>,
): Promise<void> {
  async function* records() {
    for await (const rows of entries) {
      for (const e of rows) {
        yield [
          e.date,
          batch.number,
          text(e.cost_centre),
          text(e.charge_code),
          text(e.sale_number),
          text(e.description),
          e.net_amount,
          e.vat_amount,
          e.gross_amount,
          text(e.account_code),
          e.debit ?? '',
          e.credit ?? '',
        ];
      }
    }
  }
  await sendCsvDownload(res, {
    name: `journal-${batch.number}_${period.from}_${period.to}.csv`,
    columns: JOURNAL_COLUMNS,
    records: records(),
  });
}
