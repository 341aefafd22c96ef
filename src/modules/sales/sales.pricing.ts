import { sql, type Sql } from '../../db/sql';
import { D, money, rate } from '../../lib/money';

export type LineInput = {
  itemId: number | null;
  itemName: string;
  itemSku: string;
  quantity: string;
  unitPrice: string;
  vatRate: string;
  /** a lot the line takes (issue 42): kept on a quote's line (quote_items.lot_number), not on a sale's */
  lotNumber?: string;
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
  /** a quote line's named lot (issue 42); null or absent when it takes lots first expiry first (a sale line has none) */
  lot_number?: string | null;
};

export const lineInputFromRow = (row: LineRow): LineInput => ({
  itemId: row.item_id,
  itemName: row.item_name,
  itemSku: row.item_sku,
  quantity: row.quantity,
  unitPrice: row.unit_price,
  vatRate: row.vat_rate,
  ...(row.lot_number ? { lotNumber: row.lot_number } : {}),
});

/** Priced lines as one JSON value, expanded in SQL by linesFromJson (one INSERT for all lines). */
const linesJson = (lines: PricedLine[]) =>
  JSON.stringify(lines.map((l, position) => ({ position, ...lineColumns(l), lot_number: l.lotNumber ?? null })));

/**
 * The priced lines as rows `v` (their columns LINE_VALUE_COLUMNS, their order v.position, and a quote
 * line's v.lot_number), bound as
 * one JSON value, so the statement's text is the same whatever the number of lines.
 */
export const linesFromJson = (
  lines: PricedLine[],
) => sql`jsonb_to_recordset(${linesJson(lines)}::jsonb) AS v(position int, item_id int, item_name text, item_sku text,
  quantity numeric, unit_price numeric, vat_rate numeric, vat_amount numeric, subtotal numeric, total_with_vat numeric, lot_number text)`;

export const LINE_VALUE_COLUMNS = sql.raw(
  'v.item_id, v.item_name, v.item_sku, v.quantity, v.unit_price, v.vat_rate, v.vat_amount, v.subtotal, v.total_with_vat',
);
export const LINE_COLUMNS = sql.raw(
  'item_id, item_name, item_sku, quantity, unit_price, vat_rate, vat_amount, subtotal, total_with_vat',
);

/** A line row under `alias` as JSON whose decimals stay strings (json would turn numeric into numbers), plus `extra` pairs. */
export const lineJsonObject = (alias: string, extra: Sql = sql.raw('')) => {
  const a = sql.ident(alias);
  return sql`json_build_object('id', ${a}.id, 'item_id', ${a}.item_id, 'item_name', ${a}.item_name, 'item_sku', ${a}.item_sku,
    'quantity', ${a}.quantity::text, 'unit_price', ${a}.unit_price::text, 'vat_rate', ${a}.vat_rate::text,
    'vat_amount', ${a}.vat_amount::text, 'subtotal', ${a}.subtotal::text, 'total_with_vat', ${a}.total_with_vat::text${extra})`;
};
