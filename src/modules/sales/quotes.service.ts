import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { containsPattern } from '../../db/like-pattern';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';
import { retryable, transaction } from '../../db/transaction';
import { hasRole } from '../../auth/guards';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { UnknownItemCode } from '../items/items.unknown-code';
import { D } from '../../lib/money';
import { chargeCodeForCheckSql } from '../chargecodes/chargecodes.queries';
import { checkChargeCode, validateChargeCode, type ChargeCodeForCheck } from '../chargecodes/chargecodes.validation';
import {
  findItemsForLines,
  itemForLineBySkuJson,
  itemsById,
  itemRefs,
  itemsForLinesJson,
  type ItemForLine,
} from '../items/items.queries';
import {
  LINE_COLUMNS,
  LINE_VALUE_COLUMNS,
  lineInputFromRow,
  lineJsonObject,
  linesFromJson,
  priceLines,
  type LineInput,
  type LineRow,
  type PricedLines,
} from './sales.pricing';
import type { SaveDraft, UpdateQuote } from './quotes.schemas';
import {
  fefoPreview,
  isSellable,
  lotExpiryMismatch,
  lotStatus,
  namedLotForSale,
  notTrackedByLotMessage,
} from '../lots/lots.picking';
import { expiryWarningDays, lotsHoldingStockOf, lotsNamed, storesToday } from '../lots/lots.queries';
import { scannedLot } from '../../lib/barcodes';

export type QuoteRow = {
  id: number;
  quote_id: string;
  user_id: string;
  session_id: string;
  charge_code: string | null;
  vat_applied: boolean;
  customer_notes: string | null;
  subtotal_amount: string;
  vat_amount: string;
  total_amount: string;
  status: 'draft';
  created_at: Date;
  updated_at: Date;
};

type Actor = Pick<Express.User, 'id' | 'role'>;

/** quote_items' columns and values: a sale line's, and the lot the line names (issue 42; null: first expiry first). */
const QUOTE_LINE_COLUMNS = sql`${LINE_COLUMNS}, lot_number`;
const QUOTE_LINE_VALUES = sql`${LINE_VALUE_COLUMNS}, v.lot_number`;

/** A quote line under `alias` as JSON (lineJsonObject) with its lot number, plus `extra` pairs. */
export const quoteLineJsonObject = (alias: string, extra: Sql = sql.raw('')) =>
  lineJsonObject(alias, sql`, 'lot_number', ${sql.ident(alias)}.lot_number${extra}`);

/** Q<YYYYMMDD>-<n>, n from a sequence (gaps are possible, duplicates are not). */
const QUOTE_NUMBER = sql.raw(
  `'Q' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD') || '-' || nextval('quote_number_seq')`,
);

type DraftFields = Pick<
  QuoteRow,
  'charge_code' | 'vat_applied' | 'customer_notes' | 'subtotal_amount' | 'vat_amount' | 'total_amount'
>;

/** A new draft of the session; callers add what happens when the session already has one. */
const insertDraftSql = (userId: string, sessionId: string, f: DraftFields) => sql`INSERT INTO quotes
    (quote_id, user_id, session_id, charge_code, vat_applied, customer_notes, subtotal_amount, vat_amount, total_amount)
  VALUES (${QUOTE_NUMBER}, ${userId}, ${sessionId}, ${f.charge_code}, ${f.vat_applied}, ${f.customer_notes},
    ${f.subtotal_amount}, ${f.vat_amount}, ${f.total_amount})`;

/** The session's draft exists: its fields take the new values (same id and quoteId); xmax = 0 tells a fresh insert. */
const UPDATE_EXISTING_DRAFT = sql.raw(`ON CONFLICT (user_id, session_id) DO UPDATE SET
    charge_code = EXCLUDED.charge_code, vat_applied = EXCLUDED.vat_applied, customer_notes = EXCLUDED.customer_notes,
    subtotal_amount = EXCLUDED.subtotal_amount, vat_amount = EXCLUDED.vat_amount, total_amount = EXCLUDED.total_amount,
    updated_at = now()
  RETURNING *, (xmax = 0) AS inserted`);

export const quoteNotFound = () => NotFound('Quote not found');
export const noDraftForSession = () => NotFound('No draft quote found for this session');

/** A quote as the service hands it out: the row and its lines. */
export type QuoteRecord = { quote: QuoteRow; lines: LineRow[] };

type RequestedLine = { itemId: number; quantity: string; lotNumber?: string };

/**
 * Turns requested lines into line inputs from the items as they are now (name, sku, price,
 * effective VAT rate). Unknown or inactive items are 400 field errors.
 */
function linesFromItems(requested: RequestedLine[], items: Map<number, ItemForLine>) {
  const errors: { field: string; message: string }[] = [];
  requested.forEach((line, index) => {
    const item = items.get(line.itemId);
    if (!item) errors.push({ field: `items.${index}.itemId`, message: `Item ${line.itemId} does not exist` });
    else if (!item.isActive) errors.push({ field: `items.${index}.itemId`, message: inactiveItemMessage(item) });
  });
  if (errors.length > 0) throw BadRequest('Validation failed', { errors });
  const lines: LineInput[] = requested.map((line) => {
    const item = items.get(line.itemId)!;
    return {
      itemId: item.id,
      itemName: item.name,
      itemSku: item.sku,
      quantity: line.quantity,
      unitPrice: item.price,
      vatRate: item.vatRate,
      ...(line.lotNumber ? { lotNumber: line.lotNumber } : {}),
    };
  });
  return { lines, categoryIds: [...items.values()].map((i) => i.categoryId) };
}

export async function resolveLines(db: Db, requested: RequestedLine[]) {
  return linesFromItems(
    requested,
    await findItemsForLines(
      db,
      requested.map((l) => l.itemId),
    ),
  );
}

/**
 * Quote lines naming a lot (issue 42) pass the sale's checks of a named lot now, with its messages:
 * 400 when the item is not tracked by lot, 404 when it has no such lot, 409 when the lot is expired or
 * quarantined. What the lot holds is processing's business (the spec's 400), as for any line.
 */
async function checkNamedLots(db: Db, lines: LineInput[], items: Map<number, Pick<ItemForLine, 'sku' | 'tracking'>>) {
  const named = lines.filter((l): l is LineInput & { itemId: number; lotNumber: string } =>
    Boolean(l.lotNumber && l.itemId !== null),
  );
  if (named.length === 0) return;
  for (const line of named) {
    const item = items.get(line.itemId)!;
    if (item.tracking !== 'lot') throw BadRequest(notTrackedByLotMessage(item.sku));
  }
  const lots = await lotsNamed(db, named);
  const today = storesToday();
  for (const line of named) {
    const ofItem = lots.filter((lot) => lot.itemId === line.itemId);
    namedLotForSale(items.get(line.itemId)!.sku, ofItem, line.lotNumber, today);
  }
}

const inactiveItemMessage = (item: ItemForLine) => `Item '${item.name}' is inactive`;

/** A draft line at the counter, with its item's stock and category now (null once the item is gone). */
export type BasketLine = LineRow & {
  current_stock: string | null;
  category_id: number | null;
  short_of_stock: boolean | null;
  /** the item's tracking now (issue 42), null once the item is gone */
  tracking: 'none' | 'lot' | null;
  /** issue 43, the item now (null once it is gone): its signal word and GHS pictograms, whether it is restricted and needs a COSHH reference */
  signal_word: 'Danger' | 'Warning' | null;
  pictograms: string[] | null;
  restricted: boolean | null;
  needs_coshh_reference: boolean | null;
};

/**
 * A lot a basket line would take if sold now (issue 42), and whether it is within the expiry warning
 * days; for a line naming its lot, `held` when that lot may not be sold now (it expired or was
 * quarantined since it was scanned: processing will refuse it).
 */
export type BasketLineLot = {
  lotNumber: string;
  expiresOn: string | null;
  quantity: string;
  expiring: boolean;
  held: 'expired' | 'quarantined' | null;
};

/**
 * The lots each basket line of an item tracked by lot would take if the basket were sold now, by
 * line id: in line order (as processing takes them), a line naming its lot from that lot, the
 * others first expiry first from the sellable lots. A line naming its lot shows that lot however
 * much of the line it covers (the lot's number and expiry, and the line's quantity). No read when
 * no line is of a tracked item.
 */
export async function basketLots(db: Db, lines: BasketLine[]): Promise<Map<number, BasketLineLot[]>> {
  const tracked = lines.filter((line) => line.tracking === 'lot' && line.item_id !== null);
  if (tracked.length === 0) return new Map();
  const itemIds = [...new Set(tracked.map((line) => line.item_id!))];
  const named = [...new Set(tracked.flatMap((line) => (line.lot_number ? [line.lot_number] : [])))];
  const [lots, warningDays] = await Promise.all([lotsHoldingStockOf(db, itemIds, named), expiryWarningDays(db)]);
  const today = storesToday();
  const preview = new Map<number, BasketLineLot[]>();
  for (const itemId of itemIds) {
    const itemLots = lots.get(itemId) ?? [];
    const itemLines = tracked.filter((line) => line.item_id === itemId);
    const taken = fefoPreview(
      itemLots,
      itemLines.map((line) => ({ quantity: new D(line.quantity), lotNumber: line.lot_number })),
      today,
    );
    itemLines.forEach((line, index) => {
      const lot = line.lot_number ? itemLots.find((l) => l.lotNumber === line.lot_number) : undefined;
      if (line.lot_number) {
        const status = lot ? lotStatus(lot, today, warningDays) : null;
        preview.set(line.id, [
          {
            lotNumber: line.lot_number,
            expiresOn: lot?.expiresOn ?? null,
            quantity: new D(line.quantity).toFixed(2),
            expiring: status === 'expiring',
            held:
              lot && !isSellable(lot, today) && lot.quantity.gt(0)
                ? lot.quarantined
                  ? 'quarantined'
                  : 'expired'
                : null,
          },
        ]);
        return;
      }
      preview.set(
        line.id,
        taken[index].map(({ lot: source, quantity }) => ({
          lotNumber: source.lotNumber,
          expiresOn: source.expiresOn,
          quantity: quantity.negated().toFixed(2),
          expiring: lotStatus(source, today, warningDays) === 'expiring',
          held: null,
        })),
      );
    });
  }
  return preview;
}

/**
 * The session's draft as the counter shows it; quote is null while the session has none.
 * `scannedLineId`: after a scan, the line it added to (the counter's scan log names it).
 */
export type Basket = { quote: QuoteRow | null; lines: BasketLine[]; scannedLineId?: number };

/** One edit of the counter's basket, saved at once. */
export type BasketChange =
  | { kind: 'add'; sku: string }
  | { kind: 'quantity'; lineId: number; quantity: string }
  | { kind: 'remove'; lineId: number }
  | { kind: 'details'; vatApplied: boolean; customerNotes: string | null }
  | { kind: 'chargeCode'; chargeCode: string | null };

type BasketRead = { [K in keyof QuoteRow]: QuoteRow[K] | null } & {
  lines: BasketLine[];
  scanned_item?: ItemForLine | null;
  charge_code_row?: ChargeCodeForCheck | null;
};

/**
 * Lines (quote_items rows of `source` matching `where`) as JSON with their item's stock and
 * category now; a line is short of stock when its item has less than all its lines ask.
 */
const basketLinesJson = (source: Sql, where: Sql) => sql`(SELECT coalesce(json_agg(${quoteLineJsonObject(
  'b',
  sql`, 'current_stock', b.current_stock::text, 'category_id', b.category_id, 'short_of_stock', b.short_of_stock, 'tracking', b.tracking,
        'signal_word', b.signal_word, 'pictograms', b.pictograms, 'restricted', b.restricted, 'needs_coshh_reference', b.needs_coshh_reference`,
)} ORDER BY b.id), '[]')
  FROM (SELECT x.*, i.item_current_stock AS current_stock, i.item_category_id AS category_id, i.item_tracking AS tracking,
               i.item_signal_word AS signal_word, i.item_pictograms AS pictograms, i.item_restricted AS restricted,
               i.item_needs_coshh_reference AS needs_coshh_reference,
               i.item_current_stock < sum(x.quantity) OVER (PARTITION BY x.item_id) AS short_of_stock
          FROM ${source} x LEFT JOIN ${itemRefs('i')} ON i.item_id = x.item_id WHERE ${where}) b)`;

/**
 * The session's draft (its columns all null when there is none) with its lines, in one round trip
 * with what `change` needs: the scanned SKU's item, or the entered charge code. An edit locks the
 * draft, so the edits of one session apply one after another.
 */
async function readBasket(db: Db, actor: Actor, sessionId: string, change?: BasketChange): Promise<BasketRead> {
  const lock = change ? sql.raw(' FOR UPDATE') : sql.raw('');
  const scanned = change?.kind === 'add' ? sql`, ${itemForLineBySkuJson(change.sku)} AS scanned_item` : sql.raw('');
  const code =
    change?.kind === 'chargeCode' && change.chargeCode
      ? sql`, (SELECT row_to_json(cc) FROM (${chargeCodeForCheckSql('cc', sql`${change.chargeCode}`)}) cc) AS charge_code_row`
      : sql.raw('');
  const { rows } = await preparedRaw<{ rows: BasketRead[] }>(
    db,
    sql`WITH d AS (SELECT * FROM quotes WHERE user_id = ${actor.id} AND session_id = ${sessionId}${lock})
     SELECT d.*, ${basketLinesJson(sql.raw('quote_items'), sql.raw('x.quote_id = d.id'))} AS lines${scanned}${code}
       FROM (VALUES (1)) AS one (n) LEFT JOIN d ON true`,
  );
  return rows[0];
}

const lineGone = () => BadRequest('That line is no longer in the basket');

/**
 * The lot a counter scan names (issue 42): for an item tracked by lot, the lot a GS1 scan carries in
 * (10), checked as a sale checks a named lot (404 unknown, 409 expired or quarantined), and against
 * the scan's (17) expiry when both have one (409); undefined for any other scan (its lot, if any, is
 * of no account for an item not tracked by lot; a SKU or plain barcode takes lots first expiry first).
 */
async function lotOfScan(db: Db, code: string, scanned: ItemForLine | null | undefined): Promise<string | undefined> {
  if (!scanned || !scanned.isActive || scanned.tracking !== 'lot') return undefined;
  const carried = scannedLot(code);
  if (!carried) return undefined;
  const lots = await lotsNamed(db, [{ itemId: scanned.id, lotNumber: carried.lotNumber }]);
  const lot = namedLotForSale(scanned.sku, lots, carried.lotNumber, storesToday());
  if (carried.expiresOn !== null && lot.expiresOn !== null && carried.expiresOn !== lot.expiresOn)
    throw lotExpiryMismatch(scanned.sku, lot, carried.expiresOn);
  return lot.lotNumber;
}

/**
 * The basket's lines after an add, a quantity change or a removal; for an add, the index of the line
 * it added to. A scan adds one to the line of its item and lot (`lotNumber`, none: the item's line
 * without a lot), or a new line.
 */
function changedLines(
  lines: BasketLine[],
  change: BasketChange,
  scanned: ItemForLine | null | undefined,
  lotNumber?: string,
): { inputs: LineInput[]; scannedIndex?: number } {
  const inputs = lines.map(lineInputFromRow);
  switch (change.kind) {
    case 'add': {
      if (!scanned) throw new UnknownItemCode(change.sku, 400);
      if (!scanned.isActive) throw BadRequest(inactiveItemMessage(scanned));
      const index = inputs.findIndex((l) => l.itemId === scanned.id && l.lotNumber === lotNumber);
      if (index === -1) {
        const line = {
          itemId: scanned.id,
          itemName: scanned.name,
          itemSku: scanned.sku,
          quantity: '1',
          unitPrice: scanned.price,
          vatRate: scanned.vatRate,
          ...(lotNumber ? { lotNumber } : {}),
        };
        return { inputs: [...inputs, line], scannedIndex: inputs.length };
      }
      return {
        inputs: inputs.map((l, i) => (i === index ? { ...l, quantity: new D(l.quantity).plus(1).toFixed(2) } : l)),
        scannedIndex: index,
      };
    }
    case 'quantity': {
      const index = lines.findIndex((l) => l.id === change.lineId);
      if (index === -1) throw lineGone();
      return { inputs: inputs.map((l, i) => (i === index ? { ...l, quantity: change.quantity } : l)) };
    }
    case 'remove':
      return { inputs: inputs.filter((_, i) => lines[i].id !== change.lineId) };
    default:
      return { inputs };
  }
}

/**
 * No draft was there to lock, and another request of the session created one meanwhile: the
 * change starts over on it (a retryable conflict; the 409 only when that happened three times).
 */
const draftCreatedMeanwhile = () =>
  retryable(Conflict('The basket kept changing while it was being saved; try again.'));

/** Categories of the items still behind the given lines (for the exclusion check). */
async function categoriesOfLines(db: Db, lines: { item_id: number | null }[]): Promise<number[]> {
  const ids = lines.map((l) => l.item_id).filter((id): id is number => id !== null);
  return [...(await findItemsForLines(db, ids)).values()].map((i) => i.categoryId);
}

/** Managers and admins reach every quote; others their own. */
export const canSeeAllQuotes = (actor: Actor) => hasRole(actor as Express.User, 'manager');

export function quotesService(db: Db) {
  const linesOf = (quoteId: number, trx: Db = db): Promise<LineRow[]> =>
    trx('quote_items').where({ quote_id: quoteId }).orderBy('id');

  async function withLines(quote: QuoteRow): Promise<QuoteRecord> {
    return { quote, lines: await linesOf(quote.id) };
  }

  /** Replaces a draft's lines with one INSERT (the old ones deleted first unless the draft is new). */
  async function writeLines(
    trx: Knex.Transaction,
    quoteId: number,
    priced: PricedLines,
    replace = true,
  ): Promise<LineRow[]> {
    if (replace) await trx('quote_items').where({ quote_id: quoteId }).delete();
    const { rows } = await preparedRaw<{ rows: LineRow[] }>(
      trx,
      sql`INSERT INTO quote_items (quote_id, ${QUOTE_LINE_COLUMNS})
       SELECT ${quoteId}, ${QUOTE_LINE_VALUES} FROM ${linesFromJson(priced.lines)} ORDER BY v.position
       RETURNING *`,
    );
    return rows.sort((a, b) => a.id - b.id);
  }

  const totals = (priced: PricedLines) => ({
    subtotal_amount: priced.subtotalAmount,
    vat_amount: priced.vatAmount,
    total_amount: priced.totalAmount,
  });

  /** A user's quote by id (managers and admins reach every quote); 404 otherwise. */
  /** Every quote for a manager or admin, otherwise the actor's own; most recently updated first. */
  const visibleTo = (actor: Actor) => {
    const query = db<QuoteRow>('quotes').orderBy('updated_at', 'desc').orderBy('id', 'desc');
    return canSeeAllQuotes(actor) ? query : query.where({ user_id: actor.id });
  };
  const withLinesOf = async (rows: QuoteRow[]): Promise<QuoteRecord[]> => {
    const lines =
      rows.length === 0
        ? []
        : await db<LineRow & { quote_id: number }>('quote_items')
            .whereIn(
              'quote_id',
              rows.map((r) => r.id),
            )
            .orderBy('id');
    return rows.map((quote) => ({ quote, lines: lines.filter((l) => l.quote_id === quote.id) }));
  };

  async function findFor(actor: Actor, id: number, trx: Db = db, lock = false): Promise<QuoteRow> {
    const query = trx<QuoteRow>('quotes').where({ id });
    if (!canSeeAllQuotes(actor)) query.andWhere({ user_id: actor.id });
    const row = await (lock ? query.forUpdate() : query).first();
    if (!row) throw quoteNotFound();
    return row;
  }

  return {
    async currentDraft(actor: Actor, sessionId: string): Promise<QuoteRecord> {
      const row = await db<QuoteRow>('quotes').where({ user_id: actor.id, session_id: sessionId }).first();
      if (!row) throw noDraftForSession();
      return withLines(row);
    },

    /** Creates the session's draft, or replaces its lines and fields (same id and quoteId). */
    async saveDraft(actor: Actor, input: SaveDraft): Promise<QuoteRecord> {
      // The items and the charge code in one round trip; items are checked first, as before any code.
      const items = itemsForLinesJson(input.items.map((l) => l.itemId));
      const { rows: read } = await preparedRaw<{
        rows: { items: ItemForLine[]; charge_code: ChargeCodeForCheck | null }[];
      }>(
        db,
        sql`SELECT ${items} AS items, (SELECT row_to_json(cc) FROM (${chargeCodeForCheckSql('cc', sql`${input.chargeCode}`)}) cc) AS charge_code`,
      );
      const found = itemsById(read[0].items);
      const { lines, categoryIds } = linesFromItems(input.items, found);
      await checkNamedLots(db, lines, found);
      await checkChargeCode(db, read[0].charge_code, input.chargeCode, { categoryIds });
      const priced = priceLines(lines, input.vatApplied);
      const fields = {
        charge_code: input.chargeCode,
        vat_applied: input.vatApplied,
        customer_notes: input.customerNotes ?? null,
        ...totals(priced),
      };
      const draft = insertDraftSql(actor.id, input.sessionId, fields);
      // A new session's draft: quote and lines in one statement (no conflict, nothing to replace).
      // If the session already has a draft, nothing is inserted and the replace path below runs.
      const { rows: created } = await preparedRaw<{ rows: (QuoteRow & { lines: LineRow[] })[] }>(
        db,
        sql`WITH q AS (
           ${draft} ON CONFLICT (user_id, session_id) DO NOTHING
           RETURNING *
         ), l AS (
           INSERT INTO quote_items (quote_id, ${QUOTE_LINE_COLUMNS})
           SELECT q.id, ${QUOTE_LINE_VALUES} FROM q CROSS JOIN ${linesFromJson(priced.lines)} ORDER BY v.position
           RETURNING *
         )
         SELECT q.*, (SELECT json_agg(${quoteLineJsonObject('l')} ORDER BY l.id) FROM l) AS lines FROM q`,
      );
      if (created.length > 0) {
        const { lines, ...quote } = created[0];
        return { quote, lines };
      }
      return transaction(db, async (trx) => {
        // The upsert takes the draft's row lock, so concurrent saves of one session queue up.
        const { rows } = await preparedRaw<{ rows: (QuoteRow & { inserted: boolean })[] }>(
          trx,
          sql`${draft} ${UPDATE_EXISTING_DRAFT}`,
        );
        const { inserted, ...quote } = rows[0];
        return { quote, lines: await writeLines(trx, quote.id, priced, !inserted) };
      });
    },

    /** The session's draft as the counter shows it (quote null when there is none). */
    async basket(actor: Actor, sessionId: string): Promise<Basket> {
      const { lines, scanned_item: _item, charge_code_row: _code, ...draft } = await readBasket(db, actor, sessionId);
      return { quote: draft.id === null ? null : (draft as QuoteRow), lines };
    },

    /**
     * The counter's save: one edit of the session's draft, which it creates when there is none.
     * Unlike saveDraft it keeps a basket without a charge code (or without lines) while the
     * counter builds it; processing still refuses one. An entered charge code passes the same
     * checks as on save; a refused one is thrown after the draft is saved with it, so the draft
     * holds the code the counter shows and processing refuses it for its own reason (on hold, and
     * why), not as a missing code.
     */
    async changeBasket(actor: Actor, sessionId: string, change: BasketChange): Promise<Basket> {
      const { basket, refusal } = await transaction(db, { retry: true }, async (trx) => {
        const {
          lines: current,
          scanned_item,
          charge_code_row,
          ...read
        } = await readBasket(trx, actor, sessionId, change);
        const draft = read.id === null ? null : (read as QuoteRow);
        const lotNumber = change.kind === 'add' ? await lotOfScan(trx, change.sku, scanned_item) : undefined;
        const { inputs: lines, scannedIndex } = changedLines(current, change, scanned_item, lotNumber);
        let chargeCode = draft?.charge_code ?? null;
        let vatApplied = draft?.vat_applied ?? true;
        let customerNotes = draft?.customer_notes ?? null;
        let refusal: unknown;
        if (change.kind === 'details') ({ vatApplied, customerNotes } = change);
        if (change.kind === 'chargeCode' && change.chargeCode) {
          const categoryIds = current.map((l) => l.category_id).filter((id): id is number => id !== null);
          refusal = await checkChargeCode(trx, charge_code_row, change.chargeCode, { categoryIds }).then(
            () => undefined,
            (err: unknown) => err,
          );
        }
        if (change.kind === 'chargeCode') chargeCode = change.chargeCode;
        const priced = priceLines(lines, vatApplied);
        const fields = {
          charge_code: chargeCode,
          vat_applied: vatApplied,
          customer_notes: customerNotes,
          ...totals(priced),
        };
        // The draft row is locked (or there was none), so the lines this statement deletes are all the draft has.
        const { rows } = await preparedRaw<{ rows: (QuoteRow & { inserted: boolean; lines: BasketLine[] })[] }>(
          trx,
          sql`WITH q AS (
             ${insertDraftSql(actor.id, sessionId, fields)} ${UPDATE_EXISTING_DRAFT}
           ), replaced AS (
             DELETE FROM quote_items WHERE quote_id IN (SELECT id FROM q)
           ), l AS (
             INSERT INTO quote_items (quote_id, ${QUOTE_LINE_COLUMNS})
             SELECT q.id, ${QUOTE_LINE_VALUES} FROM q CROSS JOIN ${linesFromJson(priced.lines)} ORDER BY v.position
             RETURNING *
           )
           SELECT q.*, ${basketLinesJson(sql.raw('l'), sql.raw('true'))} AS lines FROM q`,
        );
        const { inserted, lines: saved, ...quote } = rows[0];
        if (!draft && !inserted) throw draftCreatedMeanwhile();
        const scannedLineId = scannedIndex === undefined ? undefined : saved[scannedIndex]?.id;
        return { basket: { quote, lines: saved, scannedLineId }, refusal };
      });
      if (refusal) throw refusal;
      return basket;
    },

    async changeDraftChargeCode(actor: Actor, sessionId: string, chargeCode: string) {
      const draft = await db<QuoteRow>('quotes').where({ user_id: actor.id, session_id: sessionId }).first();
      if (!draft) throw noDraftForSession();
      await validateChargeCode(db, chargeCode, { categoryIds: await categoriesOfLines(db, await linesOf(draft.id)) });
      const updated = await db<QuoteRow>('quotes')
        .where({ id: draft.id })
        .update({ charge_code: chargeCode, updated_at: db.fn.now() })
        .returning('id');
      if (updated.length === 0) throw noDraftForSession();
      return chargeCode;
    },

    async deleteDraft(actor: Actor, sessionId: string) {
      const removed = await db('quotes').where({ user_id: actor.id, session_id: sessionId }).delete();
      if (removed === 0) throw noDraftForSession();
    },

    async list(actor: Actor): Promise<QuoteRecord[]> {
      return withLinesOf(await visibleTo(actor));
    },

    /**
     * The quotes the actor may see that a search finds: by quote number from its start, or by part of
     * the charge code or of the customer notes (who it is for), case-insensitive; at most `limit`.
     */
    async find(actor: Actor, search: string, limit: number): Promise<QuoteRecord[]> {
      const anywhere = containsPattern(search);
      const found = visibleTo(actor)
        .where((q) =>
          q
            .whereRaw('lower(quote_id) ^@ lower(?)', [search])
            .orWhereILike('charge_code', anywhere)
            .orWhereILike('customer_notes', anywhere),
        )
        .limit(limit);
      return withLinesOf(await found);
    },

    async get(actor: Actor, id: number): Promise<QuoteRecord> {
      return withLines(await findFor(actor, id));
    },

    async update(actor: Actor, id: number, input: UpdateQuote): Promise<QuoteRecord> {
      return transaction(db, async (trx) => {
        const quote = await findFor(actor, id, trx, true);
        let lines: LineInput[];
        let categoryIds: number[];
        if (input.items) {
          const found = await findItemsForLines(
            trx,
            input.items.map((l) => l.itemId),
          );
          ({ lines, categoryIds } = linesFromItems(input.items, found));
          await checkNamedLots(trx, lines, found);
        } else {
          const rows = await linesOf(quote.id, trx);
          lines = rows.map(lineInputFromRow);
          categoryIds = await categoriesOfLines(trx, rows);
        }
        const chargeCode = input.chargeCode ?? quote.charge_code;
        if (chargeCode && (input.chargeCode !== undefined || input.items !== undefined)) {
          await validateChargeCode(trx, chargeCode, { categoryIds });
        }
        const vatApplied = input.vatApplied ?? quote.vat_applied;
        const priced = priceLines(lines, vatApplied);
        const [row] = await trx<QuoteRow>('quotes')
          .where({ id: quote.id })
          .update({
            charge_code: chargeCode,
            vat_applied: vatApplied,
            customer_notes: input.customerNotes !== undefined ? input.customerNotes : quote.customer_notes,
            ...totals(priced),
            updated_at: trx.fn.now(),
          })
          .returning('*');
        return { quote: row, lines: await writeLines(trx, row.id, priced) };
      });
    },

    async remove(actor: Actor, id: number) {
      const query = db('quotes').where({ id });
      if (!canSeeAllQuotes(actor)) query.andWhere({ user_id: actor.id });
      if ((await query.delete()) === 0) throw quoteNotFound();
    },
  };
}
