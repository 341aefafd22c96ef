import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { inTransaction } from '../../db/knex';
import { hasRole } from '../../auth/guards';
import { BadRequest, NotFound } from '../../http/errors';
import { checkChargeCode, chargeCodeForCheckSql, validateChargeCode, type ChargeCodeForCheck } from '../chargecodes/chargecodes.validation';
import { findItemsForLines, itemsById, itemsForLinesJson, type ItemForLine } from '../items/items.lookup';
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

/** Q<YYYYMMDD>-<n>, n from a sequence (gaps are possible, duplicates are not). */
const QUOTE_NUMBER = sql.raw(`'Q' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD') || '-' || nextval('quote_number_seq')`);

export const quoteNotFound = () => NotFound('Quote not found');
export const noDraftForSession = () => NotFound('No draft quote found for this session');

/** A quote as the service hands it out: the row and its lines. */
export type QuoteRecord = { quote: QuoteRow; lines: LineRow[] };

type RequestedLine = { itemId: number; quantity: string };

/**
 * Turns requested lines into line inputs from the items as they are now (name, sku, price,
 * effective VAT rate). Unknown or inactive items are 400 field errors.
 */
function linesFromItems(requested: RequestedLine[], items: Map<number, ItemForLine>) {
  const errors: { field: string; message: string }[] = [];
  requested.forEach((line, index) => {
    const item = items.get(line.itemId);
    if (!item) errors.push({ field: `items.${index}.itemId`, message: `Item ${line.itemId} does not exist` });
    else if (!item.isActive) errors.push({ field: `items.${index}.itemId`, message: `Item '${item.name}' is inactive` });
  });
  if (errors.length > 0) throw BadRequest('Validation failed', { errors });
  const lines: LineInput[] = requested.map((line) => {
    const item = items.get(line.itemId)!;
    return { itemId: item.id, itemName: item.name, itemSku: item.sku, quantity: line.quantity, unitPrice: item.price, vatRate: item.vatRate };
  });
  return { lines, categoryIds: [...items.values()].map((i) => i.categoryId) };
}

export async function resolveLines(db: Db, requested: RequestedLine[]) {
  return linesFromItems(requested, await findItemsForLines(db, requested.map((l) => l.itemId)));
}

/** Categories of the items still behind the given lines (for the exclusion check). */
async function categoriesOfLines(db: Db, lines: { item_id: number | null }[]): Promise<number[]> {
  const ids = lines.map((l) => l.item_id).filter((id): id is number => id !== null);
  return [...(await findItemsForLines(db, ids)).values()].map((i) => i.categoryId);
}

/** Managers and admins reach every quote; others their own. */
export const canSeeAllQuotes = (actor: Actor) => hasRole(actor as Express.User, 'manager');

export function quotesService(db: Db) {
  const linesOf = (quoteId: number, trx: Db = db): Promise<LineRow[]> => trx('quote_items').where({ quote_id: quoteId }).orderBy('id');

  async function withLines(quote: QuoteRow): Promise<QuoteRecord> {
    return { quote, lines: await linesOf(quote.id) };
  }

  /** Replaces a draft's lines with one INSERT (the old ones deleted first unless the draft is new). */
  async function writeLines(trx: Knex.Transaction, quoteId: number, priced: PricedLines, replace = true): Promise<LineRow[]> {
    if (replace) await trx('quote_items').where({ quote_id: quoteId }).delete();
    const { rows } = await preparedRaw<{ rows: LineRow[] }>(
      trx,
      sql`INSERT INTO quote_items (quote_id, ${LINE_COLUMNS})
       SELECT ${quoteId}, ${LINE_VALUE_COLUMNS} FROM ${linesFromJson(priced.lines)} ORDER BY v.position
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
      const { rows: read } = await preparedRaw<{ rows: { items: ItemForLine[]; charge_code: ChargeCodeForCheck | null }[] }>(
        db,
        sql`SELECT ${items} AS items, (SELECT row_to_json(cc) FROM (${chargeCodeForCheckSql(sql`${input.chargeCode}`)}) cc) AS charge_code`,
      );
      const { lines, categoryIds } = linesFromItems(input.items, itemsById(read[0].items));
      await checkChargeCode(db, read[0].charge_code, input.chargeCode, { categoryIds });
      const priced = priceLines(lines, input.vatApplied);
      const fields = {
        charge_code: input.chargeCode,
        vat_applied: input.vatApplied,
        customer_notes: input.customerNotes ?? null,
        ...totals(priced),
      };
      const row = sql`(${QUOTE_NUMBER}, ${actor.id}, ${input.sessionId}, ${fields.charge_code}, ${fields.vat_applied}, ${fields.customer_notes},
        ${fields.subtotal_amount}, ${fields.vat_amount}, ${fields.total_amount})`;
      // A new session's draft: quote and lines in one statement (no conflict, nothing to replace).
      // If the session already has a draft, nothing is inserted and the replace path below runs.
      const { rows: created } = await preparedRaw<{ rows: (QuoteRow & { lines: LineRow[] })[] }>(
        db,
        sql`WITH q AS (
           INSERT INTO quotes (quote_id, user_id, session_id, charge_code, vat_applied, customer_notes, subtotal_amount, vat_amount, total_amount)
           VALUES ${row}
           ON CONFLICT (user_id, session_id) DO NOTHING
           RETURNING *
         ), l AS (
           INSERT INTO quote_items (quote_id, ${LINE_COLUMNS})
           SELECT q.id, ${LINE_VALUE_COLUMNS} FROM q CROSS JOIN ${linesFromJson(priced.lines)} ORDER BY v.position
           RETURNING *
         )
         SELECT q.*, (SELECT json_agg(${lineJsonObject('l')} ORDER BY l.id) FROM l) AS lines FROM q`,
      );
      if (created.length > 0) {
        const { lines, ...quote } = created[0];
        return { quote, lines };
      }
      return inTransaction(db, async (trx) => {
        // The upsert takes the draft's row lock, so concurrent saves of one session queue up;
        // xmax = 0 tells a fresh insert from an update. The quoteId of an existing draft never changes.
        const { rows } = await preparedRaw<{ rows: (QuoteRow & { inserted: boolean })[] }>(
          trx,
          sql`INSERT INTO quotes (quote_id, user_id, session_id, charge_code, vat_applied, customer_notes, subtotal_amount, vat_amount, total_amount)
           VALUES ${row}
           ON CONFLICT (user_id, session_id) DO UPDATE SET
             charge_code = EXCLUDED.charge_code, vat_applied = EXCLUDED.vat_applied, customer_notes = EXCLUDED.customer_notes,
             subtotal_amount = EXCLUDED.subtotal_amount, vat_amount = EXCLUDED.vat_amount, total_amount = EXCLUDED.total_amount,
             updated_at = now()
           RETURNING *, (xmax = 0) AS inserted`,
        );
        const { inserted, ...quote } = rows[0];
        return { quote, lines: await writeLines(trx, quote.id, priced, !inserted) };
      });
    },

    async changeDraftChargeCode(actor: Actor, sessionId: string, chargeCode: string) {
      const draft = await db<QuoteRow>('quotes').where({ user_id: actor.id, session_id: sessionId }).first();
      if (!draft) throw noDraftForSession();
      await validateChargeCode(db, chargeCode, { categoryIds: await categoriesOfLines(db, await linesOf(draft.id)) });
      const updated = await db<QuoteRow>('quotes')
        .where({ id: draft.id })
        .update({ charge_code: chargeCode, updated_at: db.fn.now() } as never)
        .returning('id');
      if (updated.length === 0) throw noDraftForSession();
      return chargeCode;
    },

    async deleteDraft(actor: Actor, sessionId: string) {
      const removed = await db('quotes').where({ user_id: actor.id, session_id: sessionId }).delete();
      if (removed === 0) throw noDraftForSession();
    },

    async list(actor: Actor): Promise<QuoteRecord[]> {
      const query = db<QuoteRow>('quotes').orderBy('updated_at', 'desc').orderBy('id', 'desc');
      if (!canSeeAllQuotes(actor)) query.where({ user_id: actor.id });
      const rows = await query;
      const lines = rows.length === 0 ? [] : await db<LineRow & { quote_id: number }>('quote_items').whereIn('quote_id', rows.map((r) => r.id)).orderBy('id');
      return rows.map((quote) => ({ quote, lines: lines.filter((l) => l.quote_id === quote.id) }));
    },

    async get(actor: Actor, id: number): Promise<QuoteRecord> {
      return withLines(await findFor(actor, id));
    },

    async update(actor: Actor, id: number, input: UpdateQuote): Promise<QuoteRecord> {
      return inTransaction(db, async (trx) => {
        const quote = await findFor(actor, id, trx, true);
        let lines: LineInput[];
        let categoryIds: number[];
        if (input.items) {
          ({ lines, categoryIds } = await resolveLines(trx, input.items));
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
          } as never)
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
