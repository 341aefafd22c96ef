import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { D } from '../../lib/money';

/*
 * The lot rules of a stock change (issue 42), without the database: which lots a change of a
 * lot-tracked item takes from or adds to. The stock ledger applies them to the lots it read under
 * the item's lock, change after change, so two changes of one item chain as their levels do.
 */

export type LotStatus = 'available' | 'expiring' | 'expired' | 'quarantined' | 'empty';

/** A lot as a stock change works on it: its quantity moves as the change's lots are picked. */
export type WorkingLot = {
  /** null until a lot created by this change is inserted */
  id: number | null;
  itemId: number;
  lotNumber: string;
  /** YYYY-MM-DD, or null for no expiry */
  expiresOn: string | null;
  quantity: D;
  receivedAt: Date;
  quarantined: boolean;
  orderId: number | null;
  supplierId: string | null;
};

/** A lot a change names: the lot to add to (created with its expiry when new), or to take from or set. */
export type NamedLot = {
  lotNumber: string;
  /** in: the new lot's expiry (undefined: the item's shelf life from today, or none); a known lot's must match */
  expiresOn?: string | null;
  /** the receiving order and its supplier, kept on a lot the receipt creates */
  orderId?: number | null;
  supplierId?: string | null;
};

/** A change's share of one lot: signed, negative for what it takes. */
export type LotMove = { lot: WorkingLot; quantity: D };

/** The lot the stock of an item goes into when tracking by lot is turned on, or when nothing says which lot it is. */
export const UNLOTTED = 'UNLOTTED';

export const lotNumberRequiredMessage = (sku: string) => `Lot number is required for ${sku}`;

/** A lot named for an item not tracked by lot (400). */
export const notTrackedByLotMessage = (sku: string) => `${sku} is not tracked by lot`;

/**
 * The lot a sale line names (issue 42), by the sale's rules: 404 when the item has no lot of that
 * number, 409 `Lot <lotNumber> of <SKU> is expired` (or quarantined) when it holds stock it may not
 * sell. A lot that ran out is no 409: what it holds (nothing) is the shortfall's business. The one
 * check the ledger makes when it sells, and a quote line makes when it names its lot.
 */
export function namedLotForSale(sku: string, lots: WorkingLot[], lotNumber: string, today: string): WorkingLot {
  const existing = lots.find((lot) => lot.lotNumber === lotNumber);
  if (!existing) throw NotFound(`Lot ${lotNumber} of ${sku} not found`);
  if (!isSellable(existing, today) && existing.quantity.gt(0))
    throw Conflict(`Lot ${existing.lotNumber} of ${sku} is ${existing.quarantined ? 'quarantined' : 'expired'}`);
  return existing;
}

/** A named lot whose expiry is not the one given (a receipt's, a count's or a scan's): 409. */
export const lotExpiryMismatch = (
  sku: string,
  lot: Pick<WorkingLot, 'lotNumber' | 'expiresOn'>,
  other: string | null,
) => Conflict(`Lot ${lot.lotNumber} of ${sku} expires on ${lot.expiresOn ?? 'no date'}, not ${other ?? 'no date'}`);

/** The status of a lot on `today` (YYYY-MM-DD), `expiring` within `warningDays` of its expiry. */
export function lotStatus(
  lot: Pick<WorkingLot, 'expiresOn' | 'quarantined'> & { quantity: D | string },
  today: string,
  warningDays: number,
): LotStatus {
  if (new D(lot.quantity).lte(0)) return 'empty';
  if (lot.quarantined) return 'quarantined';
  if (lot.expiresOn !== null && lot.expiresOn < today) return 'expired';
  if (lot.expiresOn !== null && lot.expiresOn <= addDays(today, warningDays)) return 'expiring';
  return 'available';
}

/** Whether a sale may take from the lot: it holds stock, is not quarantined, and is not past its date. */
export const isSellable = (lot: WorkingLot, today: string): boolean =>
  lot.quantity.gt(0) && !lot.quarantined && !(lot.expiresOn !== null && lot.expiresOn < today);

/** First-expiry-first-out: the earliest expiry first, lots without one last, then by receipt. */
export function fefoOrder(a: WorkingLot, b: WorkingLot): number {
  if (a.expiresOn !== b.expiresOn) {
    if (a.expiresOn === null) return 1;
    if (b.expiresOn === null) return -1;
    return a.expiresOn < b.expiresOn ? -1 : 1;
  }
  return a.receivedAt.getTime() - b.receivedAt.getTime() || (a.id ?? Infinity) - (b.id ?? Infinity);
}

/** YYYY-MM-DD plus a number of days. */
export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** What a sale may take of an item's lots, and what its expired or quarantined lots hold. */
export function sellableQuantities(lots: WorkingLot[], today: string): { sellable: D; held: D } {
  let sellable = new D(0);
  let held = new D(0);
  for (const lot of lots) {
    if (isSellable(lot, today)) sellable = sellable.plus(lot.quantity);
    else held = held.plus(lot.quantity);
  }
  return { sellable, held };
}

/** The spec's shortfall message for a lot-tracked item: the sellable stock, then what expired or quarantined lots hold. */
export const heldSuffix = (held: D) => (held.gt(0) ? ` (${held.toString()} in expired or quarantined lots)` : '');

type Item = { id: number; name: string; sku: string; shelfLifeDays: number | null };

export type LotChange =
  | { type: 'in'; quantity: D; lot?: NamedLot; returnTo?: { lotId: number; quantity: D }[] }
  | { type: 'out'; quantity: D; lot?: NamedLot; sale: boolean }
  | { type: 'adjustment'; quantity: D; lot?: NamedLot };

/**
 * The lots one change of a lot-tracked item moves, applied to `lots` (the item's, in any order;
 * a lot the change creates is appended). `shortMessage` builds the 400 for a shortfall from what
 * could be taken. Throws the 400, 404 and 409 answers.
 */
export function moveLots(
  item: Item,
  lots: WorkingLot[],
  change: LotChange,
  { today, shortMessage }: { today: string; shortMessage: (available: D, suffix: string) => string },
): LotMove[] {
  if (change.type === 'in' && change.returnTo) {
    // stock sold before the item was tracked by lot came from no lot: it goes back into UNLOTTED
    if (change.returnTo.some((source) => lots.some((lot) => lot.id === source.lotId)))
      return returnToLots(lots, change.returnTo, change.quantity);
    return moveLots(
      item,
      lots,
      { type: 'in', quantity: change.quantity, lot: { lotNumber: UNLOTTED } },
      { today, shortMessage },
    );
  }
  if (change.type === 'out' && change.sale && !change.lot) return takeFefo(lots, change.quantity, today, shortMessage);
  if (!change.lot) throw BadRequest(lotNumberRequiredMessage(item.sku));
  const named = change.lot;
  if (change.type === 'out') {
    const existing = change.sale
      ? namedLotForSale(item.sku, lots, named.lotNumber, today)
      : lots.find((lot) => lot.lotNumber === named.lotNumber);
    if (!existing) throw NotFound(`Lot ${named.lotNumber} of ${item.sku} not found`);
    if (existing.quantity.lt(change.quantity)) throw BadRequest(shortMessage(existing.quantity, ''));
    return [move(existing, change.quantity.negated())];
  }
  const existing = lots.find((lot) => lot.lotNumber === named.lotNumber);
  const lot = existing ?? newLot(item, lots, named, today);
  if (existing && named.expiresOn !== undefined && named.expiresOn !== existing.expiresOn) {
    throw lotExpiryMismatch(item.sku, existing, named.expiresOn);
  }
  return [move(lot, change.type === 'in' ? change.quantity : change.quantity.minus(lot.quantity))];
}

function move(lot: WorkingLot, quantity: D): LotMove {
  lot.quantity = lot.quantity.plus(quantity);
  return { lot, quantity };
}

function newLot(item: Item, lots: WorkingLot[], named: NamedLot, today: string): WorkingLot {
  const fromShelfLife = item.shelfLifeDays === null ? null : addDays(today, item.shelfLifeDays);
  const lot: WorkingLot = {
    id: null,
    itemId: item.id,
    lotNumber: named.lotNumber,
    expiresOn: named.expiresOn === undefined ? fromShelfLife : named.expiresOn,
    quantity: new D(0),
    receivedAt: new Date(),
    quarantined: false,
    orderId: named.orderId ?? null,
    supplierId: named.supplierId ?? null,
  };
  lots.push(lot);
  return lot;
}

/** A sale's quantity from the sellable lots, first expiry first, split across as many as it needs. */
function takeFefo(
  lots: WorkingLot[],
  quantity: D,
  today: string,
  shortMessage: (available: D, suffix: string) => string,
): LotMove[] {
  const { sellable, held } = sellableQuantities(lots, today);
  if (sellable.lt(quantity)) throw BadRequest(shortMessage(sellable, heldSuffix(held)));
  const moves: LotMove[] = [];
  let wanted = quantity;
  for (const lot of lots.filter((l) => isSellable(l, today)).sort(fefoOrder)) {
    if (wanted.lte(0)) break;
    const taken = D.min(wanted, lot.quantity);
    moves.push(move(lot, taken.negated()));
    wanted = wanted.minus(taken);
  }
  return moves;
}

/** The reasons of the movements that turn tracking by lot on and off: an adjustment to the level the item has, moving only its lots. */
export const TRACKING_ON_REASON = `Tracking by lot turned on: the stock into lot ${UNLOTTED}`;
export const TRACKING_OFF_REASON = 'Tracking by lot turned off: the stock out of its lots';

/**
 * Tracking by lot turned on for an item holding `stock`: what no lot holds goes into the lot UNLOTTED
 * (created, or an empty one reused), with no expiry. Its other lots are empty (tracking was turned off
 * with at most one holding stock, which was emptied then), so UNLOTTED takes the whole stock; the
 * item's level does not move.
 */
export function startTrackingMoves(item: Item, lots: WorkingLot[], stock: D, today: string): LotMove[] {
  const unlotted = lots.reduce((left, lot) => left.minus(lot.quantity), stock);
  if (unlotted.isNegative()) throw new Error(`The lots of ${item.sku} hold more than its stock`);
  if (unlotted.isZero()) return [];
  const existing = lots.find((lot) => lot.lotNumber === UNLOTTED);
  if (existing && existing.quantity.isZero()) existing.expiresOn = null;
  return [move(existing ?? newLot(item, lots, { lotNumber: UNLOTTED, expiresOn: null }, today), unlotted)];
}

/** Tracking by lot turned off (at most one lot holds stock): every lot emptied, the item's level keeps the stock. */
export const stopTrackingMoves = (lots: WorkingLot[]): LotMove[] =>
  lots.filter((lot) => lot.quantity.gt(0)).map((lot) => move(lot, lot.quantity.negated()));

/** A basket line as the preview takes it: its quantity, and the lot it names (null: first expiry first). */
export type PreviewLine = { quantity: D; lotNumber?: string | null };

/**
 * What lines of one item would take, in line order, each first expiry first from the sellable lots
 * what the lines before it left, or from its named lot only: a preview (the counter's basket), so
 * nothing moves and a line the lots cannot cover takes what there is.
 */
export function fefoPreview(lots: WorkingLot[], lines: PreviewLine[], today: string): LotMove[][] {
  const left = lots
    .filter((lot) => isSellable(lot, today))
    .sort(fefoOrder)
    .map((lot) => ({ lot, quantity: lot.quantity }));
  return lines.map(({ quantity, lotNumber }) => {
    const moves: LotMove[] = [];
    let wanted = quantity;
    for (const source of left) {
      if (lotNumber && source.lot.lotNumber !== lotNumber) continue;
      if (wanted.lte(0)) break;
      const taken = D.min(wanted, source.quantity);
      if (taken.lte(0)) continue;
      moves.push({ lot: source.lot, quantity: taken.negated() });
      source.quantity = source.quantity.minus(taken);
      wanted = wanted.minus(taken);
    }
    return moves;
  });
}

/** A refund's quantity back into the lots its sale took from, the latest-expiring first, each up to what it gave. */
function returnToLots(lots: WorkingLot[], returnTo: { lotId: number; quantity: D }[], quantity: D): LotMove[] {
  const sources = returnTo
    .map((source) => ({ lot: lots.find((l) => l.id === source.lotId), quantity: source.quantity }))
    .filter((source): source is { lot: WorkingLot; quantity: D } => source.lot !== undefined)
    .sort((a, b) => fefoOrder(b.lot, a.lot));
  const moves: LotMove[] = [];
  let left = quantity;
  for (const source of sources) {
    if (left.lte(0)) break;
    const back = D.min(left, source.quantity);
    moves.push(move(source.lot, back));
    left = left.minus(back);
  }
  // more back than the lots gave: the rest goes to the latest-expiring of them
  if (left.gt(0)) {
    const last = sources[0].lot;
    const already = moves.find((m) => m.lot === last);
    if (already) {
      already.quantity = already.quantity.plus(left);
      last.quantity = last.quantity.plus(left);
    } else moves.push(move(last, left));
  }
  return moves;
}
