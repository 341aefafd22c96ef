import { D, money, rate } from '../../lib/money';

export type LineInput = {
  itemId: number | null;
  itemName: string;
  itemSku: string;
  quantity: string;
  unitPrice: string;
  vatRate: string;
};

export type PricedLine = LineInput & { subtotal: string; vatAmount: string; totalWithVat: string };

export type PricedLines = { lines: PricedLine[]; subtotalAmount: string; vatAmount: string; totalAmount: string };

/**
 * Line and document totals in decimal arithmetic: each line's subtotal and VAT are
 * rounded half-up to 2 places, and the document totals are the sums of the rounded lines.
 * Without VAT applied every VAT amount is zero (the line keeps the item's rate for reference).
 */
export function priceLines(inputs: LineInput[], vatApplied: boolean): PricedLines {
  let subtotal = new D(0);
  let vat = new D(0);
  const lines = inputs.map((input) => {
    const lineSubtotal = new D(input.quantity).times(input.unitPrice).toDecimalPlaces(2);
    const lineVat = vatApplied ? lineSubtotal.times(input.vatRate).toDecimalPlaces(2) : new D(0);
    subtotal = subtotal.plus(lineSubtotal);
    vat = vat.plus(lineVat);
    return {
      ...input,
      quantity: new D(input.quantity).toFixed(2),
      unitPrice: money(input.unitPrice),
      vatRate: rate(input.vatRate),
      subtotal: money(lineSubtotal),
      vatAmount: money(lineVat),
      totalWithVat: money(lineSubtotal.plus(lineVat)),
    };
  });
  return { lines, subtotalAmount: money(subtotal), vatAmount: money(vat), totalAmount: money(subtotal.plus(vat)) };
}

/** Snake-case columns shared by quote_items and sale_items. */
export const lineColumns = (line: PricedLine) => ({
  item_id: line.itemId,
  item_name: line.itemName,
  item_sku: line.itemSku,
  quantity: line.quantity,
  unit_price: line.unitPrice,
  vat_rate: line.vatRate,
  vat_amount: line.vatAmount,
  subtotal: line.subtotal,
  total_with_vat: line.totalWithVat,
});

export type LineRow = {
  id: number;
  item_id: number | null;
  item_name: string;
  item_sku: string;
  quantity: string;
  unit_price: string;
  vat_rate: string;
  vat_amount: string;
  subtotal: string;
  total_with_vat: string;
};

export const lineInputFromRow = (row: LineRow): LineInput => ({
  itemId: row.item_id,
  itemName: row.item_name,
  itemSku: row.item_sku,
  quantity: row.quantity,
  unitPrice: row.unit_price,
  vatRate: row.vat_rate,
});

export function presentLine(row: LineRow) {
  return {
    id: row.id,
    itemId: row.item_id,
    itemName: row.item_name,
    itemSku: row.item_sku,
    quantity: row.quantity,
    unitPrice: row.unit_price,
    vatRate: rate(row.vat_rate),
    vatAmount: row.vat_amount,
    subtotal: row.subtotal,
    totalWithVat: row.total_with_vat,
  };
}

/** Priced lines as one JSON parameter, expanded in SQL by linesFromJson (one INSERT for all lines). */
export const linesJson = (lines: PricedLine[]) => JSON.stringify(lines.map((l, position) => ({ position, ...lineColumns(l) })));

/** The SQL that expands linesJson(...) (bound to the one ?) into rows, in their original order. */
export const LINES_FROM_JSON = `jsonb_to_recordset(?::jsonb) AS v(position int, item_id int, item_name text, item_sku text,
  quantity numeric, unit_price numeric, vat_rate numeric, vat_amount numeric, subtotal numeric, total_with_vat numeric)`;

export const LINE_VALUE_COLUMNS = 'v.item_id, v.item_name, v.item_sku, v.quantity, v.unit_price, v.vat_rate, v.vat_amount, v.subtotal, v.total_with_vat';
export const LINE_COLUMNS = 'item_id, item_name, item_sku, quantity, unit_price, vat_rate, vat_amount, subtotal, total_with_vat';

/** A line row as JSON whose decimals stay strings (json would turn numeric into numbers). */
export const lineJsonObject = (alias: string, extra = '') =>
  `json_build_object('id', ${alias}.id, 'item_id', ${alias}.item_id, 'item_name', ${alias}.item_name, 'item_sku', ${alias}.item_sku,
    'quantity', ${alias}.quantity::text, 'unit_price', ${alias}.unit_price::text, 'vat_rate', ${alias}.vat_rate::text,
    'vat_amount', ${alias}.vat_amount::text, 'subtotal', ${alias}.subtotal::text, 'total_with_vat', ${alias}.total_with_vat::text${extra})`;
