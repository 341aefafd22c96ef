import { pageInfo } from '../../http/pagination';
import { quantityNumber } from '../../lib/money';
import { spreadsheetText } from '../../lib/spreadsheet-safe';
import { presentJoinedUserRef } from '../users/users.present';
import {
  varianceOf,
  type PostOutcome,
  type StocktakeCountRow,
  type StocktakeDetail,
  type StocktakeLineRow,
  type StocktakeReadRow,
  type Suggestion,
} from './stocktakes.service';

/**
 * What a caller may see of a stocktake's expected figures: everything, or (a blind stocktake read
 * by a caller below manager) nothing of expected, variance and their value: those are null in the
 * answer, never sent.
 */
export type Visibility = { expected: boolean };
export const FULL_VIEW: Visibility = { expected: true };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

type RefColumns = Record<string, unknown>;
const userRef = (id: string | null, row: RefColumns, prefix: string) =>
  presentJoinedUserRef(id, {
    email: row[`${prefix}email`] as string | null,
    firstName: row[`${prefix}first_name`] as string | null,
    lastName: row[`${prefix}last_name`] as string | null,
  });

function presentHead(row: StocktakeReadRow) {
  return {
    id: row.id,
    reference: row.reference,
    name: row.name,
    status: row.status,
    blind: row.blind,
    scope: row.scope,
    createdBy: userRef(row.created_by, row, 'creator_'),
    createdAt: row.created_at.toISOString(),
    postedBy: userRef(row.posted_by, row, 'poster_'),
    postedAt: iso(row.posted_at),
    cancelledBy: userRef(row.cancelled_by, row, 'canceller_'),
    cancelledAt: iso(row.cancelled_at),
    uncounted: row.uncounted,
  };
}

export function presentStocktakeLine(line: StocktakeLineRow, view: Visibility) {
  const variance = varianceOf(line);
  return {
    itemId: line.item_id,
    sku: line.sku,
    name: line.name,
    lotNumber: line.lot_number,
    expiresOn: line.lot_expires_on,
    found: line.found,
    expected: view.expected && line.expected !== null ? quantityNumber(line.expected) : null,
    counted: line.counted === null ? null : quantityNumber(line.counted),
    variance: view.expected && variance !== null ? quantityNumber(variance) : null,
    unitPrice: view.expected ? line.unit_price : null,
    varianceValue: view.expected && variance !== null ? variance.times(line.unit_price).toFixed(2) : null,
    countedBy: userRef(line.counted_by, line, 'counter_'),
    countedAt: iso(line.counted_at),
  };
}

export function presentStocktake({ stocktake, lines, totals }: StocktakeDetail, view: Visibility) {
  return {
    ...presentHead(stocktake),
    totals: {
      linesTotal: totals.linesTotal,
      linesCounted: totals.linesCounted,
      linesFound: totals.linesFound,
      itemsWithVariance: view.expected ? totals.itemsWithVariance : null,
      varianceValue: view.expected ? totals.varianceValue : null,
    },
    lines: lines.map((line) => presentStocktakeLine(line, view)),
  };
}

export const presentStocktakeSummary = (row: StocktakeReadRow) => ({
  ...presentHead(row),
  linesTotal: row.lines_total,
  linesCounted: row.lines_counted,
});

export const presentStocktakePage = (rows: StocktakeReadRow[], page: number, limit: number, total: number) => ({
  stocktakes: rows.map(presentStocktakeSummary),
  pagination: pageInfo(page, limit, total),
});

export function presentCount(row: StocktakeCountRow) {
  return {
    id: Number(row.id),
    itemId: row.item_id,
    sku: row.sku,
    name: row.name,
    lotNumber: row.lot_number,
    mode: row.mode,
    quantity: quantityNumber(row.quantity),
    previousCounted: row.previous_counted === null ? null : quantityNumber(row.previous_counted),
    counted: quantityNumber(row.new_counted),
    countedBy: userRef(row.counted_by, row, 'counter_'),
    countedAt: row.counted_at.toISOString(),
    undoneAt: iso(row.undone_at),
  };
}

/** POST /stocktakes/{id}/counts: the line after the count, and the scan recorded. */
export const presentCountResult = (
  { line, count }: { line: StocktakeLineRow; count: StocktakeCountRow },
  view: Visibility,
) => ({ ...presentStocktakeLine(line, view), count: presentCount(count) });

/** DELETE /stocktakes/{id}/counts/{countId}: the scan undone, and its line as it is now (null once removed). */
export const presentUndoResult = (
  { line, count }: { line: StocktakeLineRow | null; count: StocktakeCountRow },
  view: Visibility,
) => ({ count: presentCount(count), line: line ? presentStocktakeLine(line, view) : null });

/** PATCH /stocktakes/{id}/counts/{countId}: the line now (null once removed) and the new scan (null for 0). */
export const presentChangeResult = (
  { line, count }: { line: StocktakeLineRow | null; count: StocktakeCountRow | null },
  view: Visibility,
) => ({ line: line ? presentStocktakeLine(line, view) : null, count: count ? presentCount(count) : null });

export const presentCountList = (rows: StocktakeCountRow[]) => ({ counts: rows.map(presentCount) });

export const presentPostResult = (outcome: PostOutcome) => outcome;

export const presentSuggestions = (days: number, rows: Suggestion[]) => ({
  days,
  items: rows.map((r) => ({
    itemId: r.id,
    sku: r.sku,
    name: r.name,
    category: { id: r.category_id, name: r.category_name },
    currentStock: quantityNumber(r.current_stock),
    price: r.price,
    stockValue: r.stock_value,
    lastCountedAt: iso(r.last_counted_at),
  })),
});

export const REPORT_CSV_COLUMNS = [
  'Reference',
  'SKU',
  'Name',
  'Found',
  'Expected',
  'Counted',
  'Variance',
  'Unit Price',
  'Variance Value',
  'Counted By',
  'Counted At',
  'Lot',
  'Lot Expires On',
];

/** A report line as a CSV record: text through spreadsheetText, numbers as numbers, blind figures empty. */
export function reportCsvRecord(reference: string, line: StocktakeLineRow, view: Visibility): unknown[] {
  const l = presentStocktakeLine(line, view);
  return [
    reference,
    spreadsheetText(l.sku),
    spreadsheetText(l.name),
    l.found ? 'yes' : 'no',
    l.expected ?? '',
    l.counted ?? '',
    l.variance ?? '',
    l.unitPrice ?? '',
    l.varianceValue ?? '',
    l.countedBy ? spreadsheetText(`${l.countedBy.firstName} ${l.countedBy.lastName}`.trim() || l.countedBy.email) : '',
    l.countedAt ?? '',
    l.lotNumber === null ? '' : spreadsheetText(l.lotNumber),
    l.expiresOn ?? '',
  ];
}
