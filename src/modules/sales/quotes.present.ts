import type { z } from 'zod';
import { quantityNumber, rate } from '../../lib/money';
import type { MessageBody } from '../../http/openapi';
import type { LineRow } from './sales.pricing';
import type { ChargeCodeChanged, Quote, QuoteLine, QuoteList, QuoteSaved } from './quotes.schemas';
import type { Basket, BasketLine, BasketLineLot, QuoteRecord } from './quotes.service';
import { PICTOGRAM_NAMES, pictogramImage } from '../hazards/hazards.service';
import type { PictogramCode } from '../hazards/hazards.schemas';

type Message = z.infer<typeof MessageBody>;

/** A quote or sale line; the VAT rate with its 4 places. */
export function presentLine(row: LineRow): Omit<QuoteLine, 'lotNumber'> {
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

/** A quote's line: a line, and the lot it names (issue 42; null: first expiry first). */
export const presentQuoteLine = (row: LineRow): QuoteLine => ({
  ...presentLine(row),
  lotNumber: row.lot_number ?? null,
});

export function presentQuote({ quote: row, lines }: QuoteRecord): Quote {
  return {
    id: row.id,
    quoteId: row.quote_id,
    sessionId: row.session_id,
    chargeCode: row.charge_code,
    subtotalAmount: row.subtotal_amount,
    vatAmount: row.vat_amount,
    totalAmount: row.total_amount,
    vatApplied: row.vat_applied,
    customerNotes: row.customer_notes,
    status: row.status,
    items: lines.map(presentQuoteLine),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const presentQuoteList = (quotes: QuoteRecord[]): QuoteList => ({ quotes: quotes.map(presentQuote) });

export const presentDraftSaved = (quote: QuoteRecord): QuoteSaved => ({
  message: 'Draft quote saved',
  quote: presentQuote(quote),
});

export const presentQuoteUpdated = (quote: QuoteRecord): QuoteSaved => ({
  message: 'Quote updated',
  quote: presentQuote(quote),
});

export const presentChargeCodeChanged = (chargeCode: string): ChargeCodeChanged => ({
  message: 'Charge code updated',
  chargeCode,
});

export const presentDraftDeleted = (): Message => ({ message: 'Draft quote deleted' });

export const presentQuoteDeleted = (): Message => ({ message: 'Quote deleted' });

/**
 * Issue 43: a basket line's pictograms and signal word as views/partials/_hazard-pictograms.ejs shows
 * them (each pictogram with its meaning and image); null when the item has neither.
 */
function basketLineHazard(line: BasketLine) {
  const codes = (line.pictograms ?? []) as PictogramCode[];
  if (codes.length === 0 && !line.signal_word) return null;
  return {
    signalWord: line.signal_word,
    pictograms: codes.map((code) => ({ code, name: PICTOGRAM_NAMES[code], image: pictogramImage(code) })),
  };
}

/** The counter's basket: an empty one (no draft yet) has VAT applied and zero totals, as a new draft would. */
/** The basket as the counter shows it; `lots`: what each line of an item tracked by lot would take (basketLots, issue 42). */
export function presentBasket(basket: Basket, lots: Map<number, BasketLineLot[]> = new Map()) {
  const { quote, lines } = basket;
  return {
    quoteId: quote?.quote_id ?? null,
    chargeCode: quote?.charge_code ?? null,
    vatApplied: quote?.vat_applied ?? true,
    customerNotes: quote?.customer_notes ?? null,
    subtotalAmount: quote?.subtotal_amount ?? '0.00',
    vatAmount: quote?.vat_amount ?? '0.00',
    totalAmount: quote?.total_amount ?? '0.00',
    scannedLineId: basket.scannedLineId ?? null,
    /** issue 43: a line's item (or its category) needs a COSHH assessment reference: the counter asks for one */
    needsCoshhReference: lines.some((line) => line.needs_coshh_reference === true),
    items: lines.map((line) => ({
      ...presentQuoteLine(line),
      /** what the line's fields and buttons are named by: the item, and its lot when it names one */
      label: line.lot_number ? `${line.item_name}, lot ${line.lot_number}` : line.item_name,
      /** the quantity as typed back into its field: 2.5, not 2.50 or a grouped 1,250 */
      quantityInput: String(quantityNumber(line.quantity)),
      currentStock: line.current_stock,
      shortOfStock: line.short_of_stock === true,
      lots: lots.get(line.id) ?? [],
      hazard: basketLineHazard(line),
      restricted: line.restricted === true,
      needsCoshhReference: line.needs_coshh_reference === true,
    })),
  };
}
export type BasketView = ReturnType<typeof presentBasket>;
