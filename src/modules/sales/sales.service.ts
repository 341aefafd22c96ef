import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { retryable, transaction } from '../../db/transaction';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../http/errors';
import { admitsUnderProfile, MANAGER_UNDER_STRICT } from '../../auth/access-profile';
import { D, money, quantityNumber } from '../../lib/money';
import { SYSTEM_ACTOR, type Actor as AuditActor } from '../audit/audit.actor';
import { hasRole } from '../../auth/guards';
import { auditTrail, auditAs } from '../audit/audit.service';
import { chargeCodePolicy } from '../chargecodes/chargecodes.policy';
import { chargeCodeForCheckSql, excludedCategoryIdsOf } from '../chargecodes/chargecodes.queries';
import {
  checkChargeCode,
  missingChargeCodeMessage,
  validateAuthorisedRecipient,
  verifyChargeCodePin,
  type ChargeCodeForCheck,
  type SaleAuthorisation,
} from '../chargecodes/chargecodes.validation';
import { notesService } from '../notes/notes.service';
import { publishEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { withUserRef } from '../users/users.queries';
import {
  findItemsForLines,
  itemStock,
  lockedById,
  lockedItemsJson,
  lockItemsByIdsSql,
  lockItemsInSql,
  type ItemForLine,
  type LockedItem,
} from '../items/items.queries';
import {
  changeStockMany,
  insufficientStockMessage,
  lotsTakenBy,
  writeStockChanges,
  type StockChange,
} from '../stock-movements/stock-movements.ledger';
import { heldSuffix } from '../lots/lots.picking';
import { sellableLotStock, sellableLotStockNow } from '../lots/lots.queries';
import { movementsOfReferences, type MovementLot } from '../stock-movements/stock-movements.queries';
import {
  LINE_COLUMNS,
  LINE_VALUE_COLUMNS,
  lineInputFromRow,
  lineJsonObject,
  linesFromJson,
  priceLines,
  type LineRow,
  type PricedLines,
} from './sales.pricing';
import { canSeeAllQuotes, quoteLineJsonObject, quoteNotFound, resolveLines, type QuoteRow } from './quotes.service';
import type { CreateSale, RecipientBody, RefundBody, SaleAuthorisationBody, SetRecipientBody } from './sales.schemas';
import { chargeCodeFigures } from './sales.figures';
import { applySalesFilter, resolveSalesFilter, type SalesFilterInput } from './sales.filters';
import { admitReceipt, queueSaleReceiptEmail } from '../emails/emails.service';

export type SaleStatus = 'completed' | 'paid' | 'partially_refunded' | 'refunded';

export type SaleRow = {
  id: number;
  sale_id: string;
  charge_code: string;
  quote_id: string | null;
  subtotal_amount: string;
  vat_amount: string;
  total_amount: string;
  vat_applied: boolean;
  refunded_amount: string;
  customer_notes: string | null;
  /** issue 43: the COSHH assessment reference the sale was made under */
  coshh_reference: string | null;
  status: SaleStatus;
  is_paid: boolean;
  processed_by: string | null;
  delivered_to: string | null;
  delivered_to_email: string | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type SaleLineRow = LineRow & { sale_id: number; refunded_quantity: string };

/** A sale line with the lots it took (issue 42): each quantity positive, [] for an item not tracked by lot. */
export type SaleLineWithLots = SaleLineRow & { lots: MovementLot[] };

export type SaleWithUser = SaleRow & {
  u_id: string | null;
  u_email: string | null;
  u_first_name: string | null;
  u_last_name: string | null;
};

type Actor = Pick<Express.User, 'id' | 'role' | 'email' | 'first_name' | 'last_name'>;

export const saleNotFound = () => NotFound('Sale not found');

/** A sale's recipient: any signed-in user under access.profile spec; its processor or a manager under strict. */
export const mayChangeRecipient = async (
  db: Db,
  user: Express.User,
  sale: Pick<SaleRow, 'processed_by'>,
): Promise<boolean> => sale.processed_by === user.id || admitsUnderProfile(db, user, MANAGER_UNDER_STRICT);

/** What a refund may still take of an item: its quantity on the sale's lines less what was refunded. */
export const leftToRefund = (itemLines: Pick<SaleLineRow, 'quantity' | 'refunded_quantity'>[]): D =>
  itemLines.reduce((sum, l) => sum.plus(l.quantity).minus(l.refunded_quantity), new D(0));

/** A sale as the service hands it out: the row with the user who processed it, and its lines. */
export type SaleRecord = { sale: SaleWithUser; lines: SaleLineWithLots[] };

/** What a refund did: the sale after it, and per line refunded now the item and the quantity. */
export type RefundRecord = { sale: SaleRow; refunded: { itemId: number; itemName: string; quantity: D }[] };

/** Sales joined with the user who processed them. */
export const salesWithUser = (db: Db) =>
  withUserRef(db('sales as s').select('s.*'), {
    userIdColumn: 's.processed_by',
    prefix: 'u_',
    withId: true,
  });

type NewSale = {
  chargeCode: string | null;
  priced: PricedLines;
  vatApplied: boolean;
  customerNotes: string | null;
  quoteId: string | null;
  processedBy: string;
  recipient: RecipientBody | null;
  /** email the recipient a receipt once the sale commits */
  emailReceipt: boolean;
  /** issue 43: the COSHH assessment reference given, or null */
  coshhReference: string | null;
  /** issue 43: who processes the sale (a restricted substance needs a manager) and whom the audit trail names */
  processor: { role: Express.User['role']; audit: AuditActor };
  /** issue 43: a request's sale: the manager who approved its restricted substances (then any staff may fulfil it) */
  restrictedApprovedBy?: string | null;
};

/** Issue 43, the audit trail's actor when the caller gives none: the user who processed the sale, by no request of theirs (a test run). */
const auditActorOf = (actor: Actor): AuditActor => ({ ...SYSTEM_ACTOR, userId: actor.id, email: actor.email });

/** Issue 43: 403 when a staff member below manager processes a sale holding a restricted substance. */
export const restrictedSaleMessage = (sku: string) =>
  `${sku} is a restricted substance: a manager must process this sale`;
/** Issue 43: 400 when a line's item (or its category) needs a COSHH assessment and the sale carries no reference. */
export const coshhReferenceMessage = (sku: string) => `A COSHH assessment reference is required for ${sku}`;

/** What a sale is checked against, read in its transaction before anything is written. */
type SaleChecks = { locked: Map<number, LockedItem>; chargeCode: ChargeCodeForCheck | null };
type SaleChecksRow = { locked_items: LockedItem[]; charge_code_row: ChargeCodeForCheck | null };

/**
 * The select-list end of both reads that open a sale (processing a quote, a direct sale), over
 * their CTEs `locked` (lockItemsInSql or lockItemsByIdsSql) and `code_row` (the charge code FOR SHARE): one round trip for
 * the item locks and the code.
 */
const SALE_CHECK_COLUMNS = sql`(SELECT ${lockedItemsJson('locked')} FROM locked) AS locked_items,
  (SELECT row_to_json(code_row) FROM code_row) AS charge_code_row`;

/**
 * Issue 39: the sale's number SALE-<YYYYMMDD>-<n>, n from the UTC day's counter row (1 on a day's
 * first sale). The row stays locked until the sale's transaction ends, so numbers are issued in
 * commit order and a sale that rolls back gives its number back: no gap. Taken once every check
 * has passed and every item row is locked, just before the sale is written, so concurrent sales
 * queue on the counter only for their last statements and a sale never waits for an item while
 * holding it (the items are always locked first: no deadlock).
 */
async function takeSaleNumber(trx: Knex.Transaction): Promise<string> {
  const { rows } = await preparedRaw<{ rows: { sale_id: string }[] }>(
    trx,
    sql`INSERT INTO sale_number_counters AS c (day, last_number) VALUES ((now() AT TIME ZONE 'UTC')::date, 1)
        ON CONFLICT (day) DO UPDATE SET last_number = c.last_number + 1
        RETURNING 'SALE-' || to_char(c.day, 'YYYYMMDD') || '-' || c.last_number AS sale_id`,
  );
  return rows[0].sale_id;
}

const saleChecks = (row: SaleChecksRow): SaleChecks => ({
  locked: lockedById(row.locked_items),
  chargeCode: row.charge_code_row,
});

/**
 * The charge-code policies of the settings for a sale on the code `codeOf` names, read and, for the
 * PIN, checked now: before the sale takes any lock, once per request (scrypt is slow). Wrong
 * PINs count against the code and `personId`, the user making the sale.
 */
async function authoriseSale(
  db: Db,
  personId: string,
  { pin, recipient }: SaleAuthorisationBody,
  codeOf: () => Promise<string | null>,
): Promise<SaleAuthorisation> {
  const policy = await chargeCodePolicy(db);
  const code = policy.requirePin ? await codeOf() : null;
  return {
    policy,
    verifiedPinHash: code === null ? null : await verifyChargeCodePin(db, code, pin, personId),
    recipientEmail: recipient?.deliveredToEmail ?? null,
  };
}

/** 400: a receipt was asked for without the address to send it to. */
const receiptNeedsAnAddress = (field: string) =>
  BadRequest('Validation failed', { errors: [{ field, message: 'is required to email a receipt' }] });

/** The sale's receipt to its recipient's email, in the transaction that recorded the sale or its recipient. */
async function emailReceiptOf(trx: Knex.Transaction, row: SaleRow, lines: SaleLineRow[]): Promise<void> {
  if (!row.delivered_to_email) return;
  await queueSaleReceiptEmail(trx, row.delivered_to_email, {
    id: row.id,
    saleId: row.sale_id,
    chargeCode: row.charge_code,
    deliveredTo: row.delivered_to,
    coshhReference: row.coshh_reference,
    createdAt: row.created_at,
    subtotalAmount: row.subtotal_amount,
    vatAmount: row.vat_amount,
    totalAmount: row.total_amount,
    lines: lines.map((l) => ({
      name: l.item_name,
      sku: l.item_sku,
      quantity: l.quantity,
      unitPrice: l.unit_price,
      total: l.total_with_vat,
    })),
  });
}

/**
 * The lines of these sales with the lots each took (issue 42), read from the stock ledger in one
 * statement. A sale writes one `out` movement per line, in line order (and a line's ids follow its
 * order), so the k-th line of an item matches the sale's k-th `out` movement of that item, and the
 * line's lots are what that movement took. Two lines of one item thus split as the sale took them:
 * in line order, each from its named lot or first-expiry-first-out from what the lines before it
 * left. Refunds (`in` movements) do not change what a line shows.
 */
async function withLots(
  db: Db,
  sales: Pick<SaleRow, 'id' | 'sale_id'>[],
  lines: SaleLineRow[],
): Promise<SaleLineWithLots[]> {
  const movements = await movementsOfReferences(
    db,
    'sale',
    sales.map((sale) => sale.sale_id),
  );
  const taken = new Map<string, MovementLot[][]>();
  for (const movement of movements) {
    if (movement.type !== 'out') continue;
    const key = `${movement.referenceId}:${movement.itemId}`;
    taken.set(key, [...(taken.get(key) ?? []), movement.lots]);
  }
  const saleNumbers = new Map(sales.map((sale) => [sale.id, sale.sale_id]));
  return [...lines]
    .sort((a, b) => a.id - b.id)
    .map((line) => {
      const lots = taken.get(`${saleNumbers.get(line.sale_id)}:${line.item_id}`)?.shift() ?? [];
      return { ...line, lots: lots.map((lot) => ({ ...lot, quantity: -lot.quantity })) };
    });
}

/**
 * The sale itself, inside the caller's transaction, in the spec's order: (1) charge code
 * checks, the policies of the settings included (the code row was read FOR SHARE, so a hold
 * committed first wins and a hold arriving later waits for this sale), then (issue 43) every
 * line for a COSHH assessment reference (400 naming the first line, in line order, whose item or
 * category needs one when none is given) and for a restricted substance (403 naming the first
 * such line when the processor is below manager and no manager approved it), (2) stock of every line
 * (the item rows were locked in ascending id order; two lines on one item are checked by their
 * sum), (3) the sale's number (takeSaleNumber), then sale, lines (and the recipient, when given),
 * stock and one movement per line written in one statement. Any throw rolls it all back, the
 * number included.
 */
async function recordSale(
  trx: Knex.Transaction,
  sale: NewSale,
  checks: SaleChecks,
  authorisation: SaleAuthorisation,
): Promise<{ row: SaleRow; lines: SaleLineWithLots[] }> {
  if (!sale.chargeCode) throw BadRequest(missingChargeCodeMessage);
  if (sale.emailReceipt && !sale.recipient?.deliveredToEmail) throw receiptNeedsAnAddress('recipient.deliveredToEmail');
  const lines = sale.priced.lines;
  if (lines.length === 0) throw BadRequest('The quote has no items');
  const { locked } = checks;
  const categoryIds = [...locked.values()].map((i) => i.category_id);
  const codeCheck = { categoryIds, processing: true, sale: authorisation };
  const code = await checkChargeCode(trx, checks.chargeCode, sale.chargeCode, codeCheck);
  for (const line of lines) {
    const item = line.itemId === null ? undefined : locked.get(line.itemId);
    if (!item || !item.is_active) throw BadRequest(`Item '${line.itemName}' is no longer available`);
  }
  // issue 43: after the charge code, before stock; the item's SKU now (the line's is the one priced)
  const needingCoshh = lines.find((l) => locked.get(l.itemId!)!.needs_coshh_reference);
  if (needingCoshh && !sale.coshhReference)
    throw BadRequest(coshhReferenceMessage(locked.get(needingCoshh.itemId!)!.sku));
  const restrictedLines = lines.filter((l) => locked.get(l.itemId!)!.restricted);
  if (restrictedLines.length > 0 && !sale.restrictedApprovedBy && !hasRole(sale.processor, 'manager'))
    throw Forbidden(restrictedSaleMessage(locked.get(restrictedLines[0].itemId!)!.sku));

  // A line naming a lot (issue 42) takes that lot only: the ledger answers for it (404 unknown lot,
  // 409 expired or quarantined, 400 with what the lot holds); the others are checked by their sum.
  const required = new Map<number, D>();
  for (const line of lines.filter((l) => !l.lotNumber))
    required.set(line.itemId!, (required.get(line.itemId!) ?? new D(0)).plus(line.quantity));
  const tracked = [...new Set(lines.map((l) => l.itemId!))].filter((id) => locked.get(id)!.tracking === 'lot');
  const lotStock = await sellableLotStock(
    trx,
    tracked.filter((id) => required.has(id)),
  );
  for (const [itemId, quantity] of [...required].sort((a, b) => a[0] - b[0])) {
    const item = locked.get(itemId)!;
    // a lot-tracked item sells only from lots neither expired nor quarantined (issue 42)
    const { sellable, held } = lotStock.get(itemId) ?? { sellable: new D(item.current_stock), held: new D(0) };
    if (sellable.lt(quantity))
      throw BadRequest(insufficientStockMessage(item.name, sellable, quantity) + heldSuffix(held));
  }

  const saleId = await takeSaleNumber(trx);
  const { priced, recipient } = sale;
  const [written] = await writeStockChanges<SaleRow & { lines: SaleLineRow[]; excluded_category_ids_now: number[] }>(
    trx,
    {
      itemStock,
      locked,
      changes: lines.map((line) => ({
        itemId: line.itemId!,
        type: 'out' as const,
        quantity: line.quantity,
        reason: `Sale ${saleId}`,
        performedBy: sale.processedBy,
        reference: { type: 'sale', id: saleId },
        sale: true,
        ...(line.lotNumber ? { lot: { lotNumber: line.lotNumber } } : {}),
      })),
      statement: (stock) => sql`WITH ${stock}, s AS (
       INSERT INTO sales (sale_id, charge_code, quote_id, subtotal_amount, vat_amount, total_amount, vat_applied, customer_notes, coshh_reference,
                          status, processed_by, delivered_to, delivered_to_email, delivered_at)
       VALUES (${saleId}, ${code.code}, ${sale.quoteId}, ${priced.subtotalAmount}, ${priced.vatAmount}, ${priced.totalAmount},
               ${sale.vatApplied}, ${sale.customerNotes}, ${sale.coshhReference}, 'completed', ${sale.processedBy},
               ${recipient?.deliveredTo ?? null}, ${recipient?.deliveredToEmail ?? null}, ${recipient ? sql.raw('now()') : null})
       RETURNING *
     ), l AS (
       INSERT INTO sale_items (sale_id, ${LINE_COLUMNS})
       SELECT s.id, ${LINE_VALUE_COLUMNS} FROM s CROSS JOIN ${linesFromJson(lines)} ORDER BY v.position
       RETURNING *
     )
     SELECT s.*, (SELECT json_agg(${lineJsonObject('l', sql`, 'sale_id', l.sale_id, 'refunded_quantity', l.refunded_quantity::text`)} ORDER BY l.id) FROM l) AS lines,
            ${excludedCategoryIdsOf(sql`${code.id}`)} AS excluded_category_ids_now
       FROM s`,
    },
  );
  // The code row is locked FOR SHARE, so a hold cannot land before this commits, but exclusions are
  // rows of their own: this statement's snapshot, taken after every lock, sees one committed while
  // the sale waited for its items. The same check again; a refusal rolls the sale back.
  const { lines: saleLines, excluded_category_ids_now: excludedNow, ...row } = written;
  await checkChargeCode(trx, { ...code, excluded_category_ids: excludedNow }, sale.chargeCode, codeCheck);
  // issue 43: every sale of a restricted substance is in the audit trail with who processed it
  if (restrictedLines.length > 0) {
    await auditTrail(trx).record(sale.processor.audit, {
      entityType: 'sale',
      entityId: row.id,
      action: 'restricted_sale',
      after: {
        saleId: row.sale_id,
        processedBy: sale.processedBy,
        processedByEmail: sale.processor.audit.email,
        restrictedApprovedBy: sale.restrictedApprovedBy ?? null,
        coshhReference: row.coshh_reference,
        lines: restrictedLines.map((l) => ({
          itemId: l.itemId,
          sku: locked.get(l.itemId!)!.sku,
          name: l.itemName,
          quantity: l.quantity,
        })),
      },
    });
  }
  if (sale.emailReceipt) await emailReceiptOf(trx, row, saleLines);
  const withTheirLots =
    tracked.length > 0 ? await withLots(trx, [row], saleLines) : saleLines.map((line) => ({ ...line, lots: [] }));
  return { row, lines: withTheirLots };
}

/** The sale just recorded, without reading it back (the actor processed it). */
const recorded = (actor: Actor, { row, lines }: { row: SaleRow; lines: SaleLineWithLots[] }): SaleRecord => ({
  sale: { ...row, u_id: actor.id, u_email: actor.email, u_first_name: actor.first_name, u_last_name: actor.last_name },
  lines,
});

/**
 * A save of the draft that commits while processing waits for the quote's row lock hands the
 * DELETE the new quote, but the lines the statement read are the ones from before the save.
 * Processing then starts over (its next statement sees the saved lines) instead of selling the
 * old basket; the rollback undoes the delete. A retryable conflict: the 409 reaches the client
 * only when the quote changed under all three attempts.
 */
const quoteChangedWhileTaken = () =>
  retryable(Conflict('The quote kept changing while it was being processed; nothing was sold. Process it again.'));

/** How long an Idempotency-Key of a direct sale is remembered. */
export const IDEMPOTENCY_KEY_LIFETIME = '24 hours';

/**
 * Claims the user's key for this request in the caller's transaction: null when the key is new (or
 * its 24 hours are over: the user's expired keys are deleted first), so the caller records the
 * sale and writes its id on the key; the id of the sale recorded with it otherwise; 409 when the
 * key was used for a different request. A duplicate running at the same time waits on the key's
 * primary key until the first transaction ends.
 */
async function claimIdempotencyKey(
  trx: Knex.Transaction,
  userId: string,
  key: string,
  requestHash: string,
): Promise<number | null> {
  await preparedRaw(
    trx,
    sql`DELETE FROM sale_idempotency_keys WHERE user_id = ${userId} AND created_at < now() - ${IDEMPOTENCY_KEY_LIFETIME}::interval`,
  );
  const { rows: claimed } = await preparedRaw<{ rows: unknown[] }>(
    trx,
    sql`INSERT INTO sale_idempotency_keys (user_id, key, request_hash) VALUES (${userId}, ${key}, ${requestHash})
        ON CONFLICT (user_id, key) DO NOTHING RETURNING key`,
  );
  if (claimed.length > 0) return null;
  const earlier = await trx('sale_idempotency_keys')
    .where({ user_id: userId, key })
    .first<{ request_hash: string; sale_id: number | null } | undefined>();
  if (!earlier || earlier.sale_id === null)
    throw Conflict('A sale with this Idempotency-Key is being recorded; try again');
  if (earlier.request_hash !== requestHash) {
    throw Conflict(
      'This Idempotency-Key was already used for a different sale; nothing was recorded. Use a new key for a new sale.',
    );
  }
  return earlier.sale_id;
}

/** The quote taken (deleted) and sold, in the caller's transaction: recordSale's checks and writes. */
async function processOnce(
  trx: Knex.Transaction,
  actor: Actor,
  {
    quoteId,
    authorisation,
    recipient,
    emailReceipt,
    coshhReference,
    auditActor,
  }: {
    quoteId: number;
    authorisation: SaleAuthorisation;
    recipient: RecipientBody | null;
    emailReceipt: boolean;
    coshhReference: string | null;
    auditActor: AuditActor;
  },
) {
  const own = canSeeAllQuotes(actor) ? sql`` : sql` AND user_id = ${actor.id}`;
  const { rows } = await preparedRaw<{
    rows: (QuoteRow & { lines: LineRow[]; changed_while_taken: boolean } & SaleChecksRow)[];
  }>(
    trx,
    sql`WITH q AS (
       DELETE FROM quotes WHERE id = ${quoteId}${own} RETURNING *, xmin AS taken_version
     ), l AS (
       SELECT qi.* FROM quote_items qi WHERE qi.quote_id IN (SELECT id FROM q)
     ), locked AS (
       ${lockItemsInSql(sql.raw('SELECT item_id FROM l'))}
     ), code_row AS (
       ${chargeCodeForCheckSql('cc', sql`(SELECT charge_code FROM q)`)} FOR SHARE OF cc
     )
     SELECT q.*, (SELECT coalesce(json_agg(${quoteLineJsonObject('l')} ORDER BY l.id), '[]') FROM l) AS lines,
            (SELECT r.xmin FROM quotes r WHERE r.id = q.id) IS DISTINCT FROM q.taken_version AS changed_while_taken, ${SALE_CHECK_COLUMNS}
       FROM q`,
  );
  if (rows.length === 0) throw quoteNotFound();
  const quote = rows[0];
  // The version of the quote in the statement's snapshot (and so its lines) is not the one deleted: a save committed meanwhile.
  if (quote.changed_while_taken) throw quoteChangedWhileTaken();
  return recordSale(
    trx,
    {
      chargeCode: quote.charge_code,
      priced: priceLines(quote.lines.map(lineInputFromRow), quote.vat_applied),
      vatApplied: quote.vat_applied,
      customerNotes: quote.customer_notes,
      quoteId: quote.quote_id,
      processedBy: actor.id,
      recipient,
      emailReceipt,
      coshhReference,
      processor: { role: actor.role, audit: auditActor },
    },
    saleChecks(quote),
    authorisation,
  );
}

/** A line a request asks for (issue 33). */
export type RequestedSaleLine = { itemId: number; quantity: string };

/**
 * Lines priced from the items now, as a direct sale prices them (VAT applied), with the categories
 * the charge code is checked against and what each item has for sale now (stockForSale: a lot-tracked
 * item its sellable lots): what a request records when it is submitted (issue 33). Unknown or
 * inactive items are 400 field errors, as at the counter.
 */
export async function priceRequestedLines(
  db: Db,
  items: RequestedSaleLine[],
): Promise<{
  priced: PricedLines;
  categoryIds: number[];
  stock: Map<number, D>;
  /** the items now, by id (issue 43: whether each needs a COSHH reference, is restricted) */
  items: Map<number, ItemForLine>;
}> {
  const { lines, categoryIds } = await resolveLines(db, items);
  const found = await findItemsForLines(
    db,
    items.map((i) => i.itemId),
  );
  return {
    priced: priceLines(lines, true),
    categoryIds,
    stock: await stockForSale(db, found.values()),
    items: found,
  };
}

/**
 * What each of these items has for sale now, read without a lock (a request's short flag and
 * availability, issue 42): an item tracked by lot only its sellable lots (the rule recordSale and
 * recordRequestSale apply under the lock: neither expired nor quarantined), any other its stock; an
 * inactive item none.
 */
export async function stockForSale(db: Db, items: Iterable<ItemForLine>): Promise<Map<number, D>> {
  const list = [...items];
  const lotStock = await sellableLotStockNow(
    db,
    list.filter((item) => item.tracking === 'lot').map((item) => item.id),
  );
  return new Map(
    list.map((item) => [
      item.id,
      item.isActive ? (lotStock.get(item.id)?.sellable ?? new D(item.currentStock)) : new D(0),
    ]),
  );
}

/** What fulfilling a request sells: its code, lines, notes, and the requester (the recipient the code's policy weighs). */
export type RequestSaleInput = {
  chargeCode: string;
  items: RequestedSaleLine[];
  customerNotes: string | null;
  requesterEmail: string;
  /** issue 43: the request's COSHH assessment reference (or the one given at fulfilment) */
  coshhReference: string | null;
  /** issue 43: the manager who approved the request's restricted substances, or null */
  restrictedApprovedBy: string | null;
  /** issue 43: whom the audit trail names for a sale of a restricted substance */
  auditActor: AuditActor;
};

/**
 * A request's sale: the sale, per requested item what it took (less than asked when stock was
 * short), and what it had for sale before (an item tracked by lot: its sellable lots; inactive: 0).
 */
export type RequestSaleRecord = SaleRecord & { taken: Map<number, D>; forSale: Map<number, D> };

export const nothingInStockMessage = 'None of the requested items is in stock; nothing was sold';

/**
 * Issue 33: a request fulfilled as a sale, in the caller's transaction (which holds the request's
 * row), through the counter's own processing (recordSale): the items locked in id order and the
 * charge code read FOR SHARE in one statement, the code checked again with
 * the counter's messages (validity, hold, exclusions, and the authorised-people policy with the
 * requester as the recipient; no PIN: the request is not made at the counter), then the sale, its
 * lines, the stock out and one movement per line. Each line takes what the stock has, up to the
 * quantity asked: a short line sells less (never more than the stock), an item out of stock or
 * inactive sells nothing; when nothing at all can be sold, 409 and nothing is written. An item
 * tracked by lot counts only its sellable lots, and its line takes them first-expiry-first-out.
 */
export async function recordRequestSale(
  trx: Knex.Transaction,
  actor: Actor,
  input: RequestSaleInput,
): Promise<RequestSaleRecord> {
  const policy = await chargeCodePolicy(trx);
  const itemIds = [...new Set(input.items.map((l) => l.itemId))];
  const { rows } = await preparedRaw<{ rows: SaleChecksRow[] }>(
    trx,
    sql`WITH locked AS (${lockItemsByIdsSql(itemIds)}), code_row AS (${chargeCodeForCheckSql('cc', sql`${input.chargeCode}`)} FOR SHARE OF cc)
     SELECT ${SALE_CHECK_COLUMNS}`,
  );
  const checks = saleChecks(rows[0]);
  // an item tracked by lot has for sale only its lots neither expired nor quarantined (issue 42)
  const lotStock = await sellableLotStock(
    trx,
    [...checks.locked.values()].filter((item) => item.tracking === 'lot').map((item) => item.id),
  );
  const left = new Map(
    [...checks.locked].map(([id, item]) => [
      id,
      item.is_active ? (lotStock.get(id)?.sellable ?? new D(item.current_stock)) : new D(0),
    ]),
  );
  const forSale = new Map(left);
  const taken = new Map<number, D>();
  const selling: RequestedSaleLine[] = [];
  for (const line of input.items) {
    const available = D.max(left.get(line.itemId) ?? new D(0), 0);
    const take = D.min(available, line.quantity);
    left.set(line.itemId, available.minus(take));
    taken.set(line.itemId, (taken.get(line.itemId) ?? new D(0)).plus(take));
    if (take.gt(0)) selling.push({ itemId: line.itemId, quantity: take.toFixed(2) });
  }
  if (selling.length === 0) throw Conflict(nothingInStockMessage);
  const { lines } = await resolveLines(trx, selling);
  const sale = await recordSale(
    trx,
    {
      chargeCode: input.chargeCode,
      priced: priceLines(lines, true),
      vatApplied: true,
      customerNotes: input.customerNotes,
      quoteId: null,
      processedBy: actor.id,
      recipient: null,
      emailReceipt: false,
      coshhReference: input.coshhReference,
      processor: { role: actor.role, audit: input.auditActor },
      restrictedApprovedBy: input.restrictedApprovedBy,
    },
    checks,
    {
      policy: { requirePin: false, requireAuthorisedUser: policy.requireAuthorisedUser },
      verifiedPinHash: null,
      recipientEmail: input.requesterEmail,
    },
  );
  return { ...recorded(actor, sale), taken, forSale };
}

/** Issue 33: who collected a request's goods, recorded on its sale in the caller's transaction (deliveredTo, the requester's email, now). */
export async function recordSaleCollection(
  trx: Knex.Transaction,
  saleId: number,
  recipient: { deliveredTo: string; deliveredToEmail: string | null },
): Promise<SaleRow> {
  const [row] = await trx<SaleRow>('sales')
    .where({ id: saleId })
    .update({
      delivered_to: recipient.deliveredTo,
      delivered_to_email: recipient.deliveredToEmail,
      delivered_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    })
    .returning('*');
  if (!row) throw saleNotFound();
  return row;
}

export function salesService(db: Db) {
  async function findRow(id: number, trx: Db = db): Promise<SaleWithUser> {
    const row = await salesWithUser(trx).where('s.id', id).first();
    if (!row) throw saleNotFound();
    return row;
  }
  const linesOf = (saleIds: number[], trx: Db = db): Promise<SaleLineRow[]> =>
    trx('sale_items').whereIn('sale_id', saleIds).orderBy('id');
  /** The sales with their lines, each line with the lots it took (two statements for a page). */
  const withLines = async <S extends SaleRow>(
    sales: S[],
    trx: Db = db,
  ): Promise<{ sale: S; lines: SaleLineWithLots[] }[]> => {
    if (sales.length === 0) return [];
    const lines = await withLots(
      trx,
      sales,
      await linesOf(
        sales.map((s) => s.id),
        trx,
      ),
    );
    return sales.map((sale) => ({ sale, lines: lines.filter((l) => l.sale_id === sale.id) }));
  };
  /** The sale as GET /sales/{id} reads it, in the caller's transaction (an event's data). */
  const readSale = async (id: number, trx: Db = db): Promise<SaleRecord> =>
    (await withLines([await findRow(id, trx)], trx))[0];

  /**
   * Sets fields of one sale (and updated_at) once `allowed` passes it, then runs `changed`, and
   * records the change as `action` with what `shown` picks of the sale before and after; 404 when
   * there is no such sale.
   */
  function changeSale(
    actor: AuditActor,
    id: number,
    {
      action,
      fields,
      shown,
      allowed = async () => {},
      changed = async () => {},
    }: {
      action: string;
      fields: Record<string, unknown>;
      shown: (row: SaleRow) => Record<string, unknown>;
      allowed?: (sale: SaleRow, trx: Knex.Transaction) => Promise<void>;
      changed?: (before: SaleRow, after: SaleRow, trx: Knex.Transaction) => Promise<void>;
    },
  ): Promise<SaleRow> {
    return transaction(db, { audit: auditAs(actor) }, async (trx) => {
      const before = await trx<SaleRow>('sales').where({ id }).forUpdate().first();
      if (!before) throw saleNotFound();
      await allowed(before, trx);
      const [row] = await trx<SaleRow>('sales')
        .where({ id })
        .update({ ...fields, updated_at: trx.fn.now() })
        .returning('*');
      await changed(before, row, trx);
      return {
        result: row,
        audit: { entityType: 'sale', entityId: id, action, before: shown(before), after: shown(row) },
      };
    });
  }
  const payment = (row: SaleRow) => ({ isPaid: row.is_paid, status: row.status });
  const recipientOf = (row: SaleRow) => ({
    deliveredTo: row.delivered_to,
    deliveredToEmail: row.delivered_to_email,
    deliveredAt: row.delivered_at,
  });

  return {
    async get(id: number): Promise<SaleRecord> {
      return readSale(id);
    },

    /** The sales of these ids that exist, with their lines, newest first (a requester's sales, issue 33). */
    async byIds(ids: number[]): Promise<SaleRecord[]> {
      if (ids.length === 0) return [];
      const rows: SaleWithUser[] = await salesWithUser(db)
        .whereIn('s.id', ids)
        .orderBy([
          { column: 's.created_at', order: 'desc' },
          { column: 's.id', order: 'desc' },
        ]);
      return withLines(rows);
    },

    /** The ids of the sales these sale numbers (SALE-...) name, by number: what a stock movement's reference links to. */
    async idsBySaleNumber(saleNumbers: string[]): Promise<Map<string, number>> {
      if (saleNumbers.length === 0) return new Map();
      const rows = await db<SaleRow>('sales')
        .whereIn('sale_id', [...new Set(saleNumbers)])
        .select('id', 'sale_id');
      return new Map(rows.map((row) => [row.sale_id, row.id]));
    },

    /**
     * Converts a draft into a sale; the draft is removed in the same transaction. The first
     * statement takes the quote (DELETE ... RETURNING: a double submission waits on the row, then
     * finds it gone, 404) with its lines, and reads what the sale is checked against.
     */
    async processQuote(
      actor: Actor,
      quoteId: number,
      body: SaleAuthorisationBody = {},
      auditActor: AuditActor = auditActorOf(actor),
    ): Promise<SaleRecord> {
      const authorisation = await authoriseSale(db, actor.id, body, async () => {
        const quote = await db<QuoteRow>('quotes').where({ id: quoteId }).first('user_id', 'charge_code');
        return quote && (quote.user_id === actor.id || canSeeAllQuotes(actor)) ? quote.charge_code : null;
      });
      const recipient = body.recipient ?? null;
      if (body.emailReceipt && recipient?.deliveredToEmail)
        await admitReceipt(db, actor.id, recipient.deliveredToEmail, 'recipient.deliveredToEmail');
      return recorded(
        actor,
        await transaction(db, { retry: true }, async (trx) => {
          const sale = await processOnce(trx, actor, {
            quoteId,
            authorisation,
            recipient,
            emailReceipt: body.emailReceipt ?? false,
            coshhReference: body.coshhReference ?? null,
            auditActor,
          });
          await publishEvent(trx, 'sale.created', () => recorded(actor, sale));
          return sale;
        }),
      );
    },

    /**
     * A sale straight from lines (no draft), with the same checks as processing. With an
     * idempotency key, the key is claimed in the sale's transaction first: a key this user already
     * used (in the last 24 hours) for the same request answers the sale it recorded, for another
     * request 409; a concurrent duplicate waits on the key's primary key until the first commits
     * (then replays it) or rolls back (then records the sale itself).
     */
    async create(
      actor: Actor,
      input: CreateSale,
      idempotencyKey?: string,
      auditActor: AuditActor = auditActorOf(actor),
    ): Promise<SaleRecord> {
      // The key's stored hash leaves the PIN out: a digest of a short PIN beside known fields would give it away.
      const { pin, ...hashed } = input;
      const requestHash = createHash('sha256').update(JSON.stringify(hashed)).digest('hex');
      if (input.emailReceipt && input.recipient?.deliveredToEmail)
        await admitReceipt(db, actor.id, input.recipient.deliveredToEmail, 'recipient.deliveredToEmail');
      const authorisation = await authoriseSale(
        db,
        actor.id,
        { pin, recipient: input.recipient },
        async () => input.chargeCode,
      );
      type Outcome = { replay: SaleRecord } | { recordedNow: { row: SaleRow; lines: SaleLineWithLots[] } };
      const outcome = await transaction(db, { retry: true }, async (trx): Promise<Outcome> => {
        if (idempotencyKey !== undefined) {
          const earlier = await claimIdempotencyKey(trx, actor.id, idempotencyKey, requestHash);
          if (earlier !== null) return { replay: await readSale(earlier, trx) };
        }
        const { lines } = await resolveLines(trx, input.items);
        const itemIds = [...new Set(input.items.map((l) => l.itemId))];
        const { rows } = await preparedRaw<{ rows: SaleChecksRow[] }>(
          trx,
          sql`WITH locked AS (${lockItemsByIdsSql(itemIds)}), code_row AS (${chargeCodeForCheckSql('cc', sql`${input.chargeCode}`)} FOR SHARE OF cc)
           SELECT ${SALE_CHECK_COLUMNS}`,
        );
        const sale = await recordSale(
          trx,
          {
            chargeCode: input.chargeCode,
            priced: priceLines(lines, input.vatApplied),
            vatApplied: input.vatApplied,
            customerNotes: input.customerNotes ?? null,
            quoteId: null,
            processedBy: actor.id,
            recipient: input.recipient ?? null,
            emailReceipt: input.emailReceipt ?? false,
            coshhReference: input.coshhReference ?? null,
            processor: { role: actor.role, audit: auditActor },
          },
          saleChecks(rows[0]),
          authorisation,
        );
        if (idempotencyKey !== undefined) {
          await trx('sale_idempotency_keys')
            .where({ user_id: actor.id, key: idempotencyKey })
            .update({ sale_id: sale.row.id });
        }
        await publishEvent(trx, 'sale.created', () => recorded(actor, sale));
        return { recordedNow: sale };
      });
      return 'replay' in outcome ? outcome.replay : recorded(actor, outcome.recordedNow);
    },

    /** One page of sales, newest first, and how many the filter matches in all. */
    async list(input: SalesFilterInput, page: number, limit: number): Promise<{ sales: SaleRecord[]; total: number }> {
      const filter = await resolveSalesFilter(db, input);
      const total = (await chargeCodeFigures(db, filter)).reduce((sum, g) => sum + g.sales, 0);
      const rows: SaleWithUser[] = await applySalesFilter(salesWithUser(db), filter)
        .orderBy([
          { column: 's.created_at', order: 'desc' },
          { column: 's.id', order: 'desc' },
        ])
        .limit(limit)
        .offset((page - 1) * limit);
      return { sales: await withLines(rows), total };
    },

    markPaid: (actor: AuditActor, id: number) =>
      changeSale(actor, id, {
        action: 'mark_paid',
        fields: { is_paid: true, status: db.raw(`CASE WHEN status = 'completed' THEN 'paid' ELSE status END`) },
        shown: payment,
        changed: async (before, _after, trx) => {
          if (!before.is_paid) await publishEvent(trx, 'sale.paid', async () => readSale(id, trx));
        },
      }),

    markUnpaid: (actor: AuditActor, id: number) =>
      changeSale(actor, id, {
        action: 'mark_unpaid',
        fields: { is_paid: false, status: db.raw(`CASE WHEN status = 'paid' THEN 'completed' ELSE status END`) },
        shown: payment,
      }),

    /**
     * Under access.profile strict only the sale's processor or a manager may; with chargeCodes.requireAuthorisedUser
     * on, the new recipient too must be an authorised user of the sale's code.
     */
    setRecipient: async (
      actor: AuditActor,
      changer: Express.User,
      id: number,
      { deliveredTo, deliveredToEmail = null, emailReceipt = false }: SetRecipientBody,
    ) => {
      if (emailReceipt && !deliveredToEmail) throw receiptNeedsAnAddress('deliveredToEmail');
      if (emailReceipt && deliveredToEmail) await admitReceipt(db, changer.id, deliveredToEmail, 'deliveredToEmail');
      return changeSale(actor, id, {
        action: 'change_recipient',
        fields: { delivered_to: deliveredTo, delivered_to_email: deliveredToEmail, delivered_at: db.fn.now() },
        shown: recipientOf,
        allowed: async (sale, trx) => {
          if (!(await mayChangeRecipient(trx, changer, sale))) {
            throw Forbidden(
              `Only the sale's processor or a ${MANAGER_UNDER_STRICT.role} may set its recipient (setting access.profile is ${MANAGER_UNDER_STRICT.profile})`,
            );
          }
          if ((await chargeCodePolicy(trx)).requireAuthorisedUser)
            await validateAuthorisedRecipient(trx, sale.charge_code, deliveredToEmail);
        },
        changed: async (_before, sale, trx) => {
          if (emailReceipt) await emailReceiptOf(trx, sale, await linesOf([sale.id], trx));
        },
      });
    },

    /**
     * Refunds quantities per item: within what is left unrefunded on the sale's lines for that
     * item (a second line on the same item takes the rest), stock restored through the ledger,
     * a note on the sale. The refunded amount of a line is its total pro rata to the refunded
     * quantity, rounded half-up, so a full refund gives back exactly the line total.
     */
    async refund(actor: AuditActor, id: number, input: RefundBody): Promise<RefundRecord> {
      return transaction(db, { retry: true }, async (trx) => {
        const sale = await trx<SaleRow>('sales').where({ id }).forUpdate().first();
        if (!sale) throw saleNotFound();
        if (sale.status === 'refunded') throw BadRequest('Sale has already been fully refunded');
        const lines = await linesOf([sale.id], trx);

        const requested = new Map<number, D>();
        for (const r of input.items) requested.set(r.itemId, (requested.get(r.itemId) ?? new D(0)).plus(r.refundQty));
        const refunds = new Map<number, D>(); // sale line id -> quantity refunded now
        for (const [itemId, quantity] of requested) {
          const itemLines = lines.filter((l) => l.item_id === itemId);
          if (itemLines.length === 0) throw BadRequest(`Item ${itemId} is not part of sale ${sale.sale_id}`);
          const left = leftToRefund(itemLines);
          if (quantity.gt(left)) {
            throw BadRequest(
              `Cannot refund ${quantity.toString()} of '${itemLines[0].item_name}': only ${left.toString()} left to refund`,
            );
          }
          let rest = quantity;
          for (const line of itemLines) {
            const available = new D(line.quantity).minus(line.refunded_quantity);
            const take = D.min(available, rest);
            if (take.gt(0)) refunds.set(line.id, take);
            rest = rest.minus(take);
          }
        }

        let refundedAmount = new D(0);
        let fullyRefunded = true;
        const refunded: RefundRecord['refunded'] = [];
        const stockBack: StockChange[] = [];
        for (const line of lines) {
          const now = refunds.get(line.id) ?? new D(0);
          const refundedQty = new D(line.refunded_quantity).plus(now);
          refundedAmount = refundedAmount.plus(
            new D(line.total_with_vat).times(refundedQty).dividedBy(line.quantity).toDecimalPlaces(2),
          );
          if (refundedQty.lt(line.quantity)) fullyRefunded = false;
          if (now.isZero()) continue;
          await trx('sale_items')
            .where({ id: line.id })
            .update({ refunded_quantity: refundedQty.toFixed(2) });
          stockBack.push({
            itemId: line.item_id!,
            type: 'in',
            quantity: now.toFixed(2),
            reason: `Refund of sale ${sale.sale_id}`,
            performedBy: actor.userId,
            reference: { type: 'sale', id: sale.sale_id },
            returnTo: await lotsTakenBy(trx, { type: 'sale', id: sale.sale_id }, line.item_id!),
          });
          refunded.push({ itemId: line.item_id!, itemName: line.item_name, quantity: now });
        }
        await changeStockMany(trx, itemStock, stockBack);
        const status: SaleStatus = fullyRefunded ? 'refunded' : 'partially_refunded';
        const [updated] = await trx<SaleRow>('sales')
          .where({ id: sale.id })
          .update({ status, refunded_amount: money(refundedAmount), updated_at: trx.fn.now() })
          .returning('*');

        const description = refunded.map((r) => `${quantityNumber(r.quantity)} x ${r.itemName}`).join(', ');
        const amountNow = refundedAmount.minus(sale.refunded_amount);
        await notesService(trx).add({
          text:
            `Refund on sale ${sale.sale_id}: ${description}. Amount refunded: ${money(amountNow)} ` +
            `(total refunded ${money(refundedAmount)} of ${sale.total_amount}).` +
            (input.note ? ` Note: ${input.note}` : ''),
          referenceType: 'sale',
          referenceId: String(sale.id),
          createdBy: actor.userId,
          kind: 'refund',
        });
        await publishEvent(trx, 'sale.refunded', async () => readSale(sale.id, trx));
        await auditTrail(trx).record(actor, {
          entityType: 'sale',
          entityId: sale.id,
          action: 'refund',
          before: { status: sale.status, refundedAmount: sale.refunded_amount },
          after: {
            status: updated.status,
            refundedAmount: updated.refunded_amount,
            amount: money(amountNow),
            lines: refunded.map((r) => ({ itemId: r.itemId, itemName: r.itemName, quantity: r.quantity.toFixed(2) })),
            reason: input.note ?? null,
          },
        });
        return { sale: updated, refunded };
      });
    },
  };
}
