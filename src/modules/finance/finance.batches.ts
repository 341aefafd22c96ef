import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { D } from '../../lib/money';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { allQueries, transaction } from '../../db/transaction';
import type { z } from 'zod';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { chargeCodeByCode, costCentreOf } from '../chargecodes/chargecodes.queries';
import {
  batchRefundLinesOf,
  claimRefundLines,
  linesOfSale,
  saleById,
  saleLineById,
  saleLinesOf,
  saleSummaries,
  unbatchedRefundLines,
} from '../sales/sales.queries';
import type { CloseBatch } from './finance.schemas';
import { categoryRefs } from '../categories/categories.queries';
import { itemRefs } from '../items/items.queries';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const JOURNAL_BATCH = 2000;

export type BatchRow = {
  id: number;
  number: string;
  period: string;
  seq: number;
  recorded_before: Date;
  closed_at: Date;
  closed_by: string | null;
  closed_by_email: string | null;
  sales_count: number;
  refunds_count: number;
  net_amount: string;
  vat_amount: string;
  gross_amount: string;
};

/** A batch's entries summed per cost centre and charge code (as the batch copied them at close time). */
export type BatchGroupRow = {
  cost_centre: string;
  charge_code: string;
  sales: number;
  refunds: number;
  net: string;
  vat: string;
  gross: string;
};

export type BatchRecord = { batch: BatchRow; groups: BatchGroupRow[] };

/**
 * A journal row: one entry's lines of one ledger account code, summed; the entry's UTC day as
 * YYYY-MM-DD, amounts as PostgreSQL prints numeric(14,2). A sale is a debit of its gross to the
 * cost centre, a refund a credit (the other of the two is null).
 */
export type JournalRow = {
  id: number;
  date: string;
  cost_centre: string;
  charge_code: string;
  sale_number: string;
  account_code: string;
  description: string;
  net_amount: string;
  vat_amount: string;
  gross_amount: string;
  debit: string | null;
  credit: string | null;
};

/** The UTC days a batch's journal covers, for its file name: from the end of the batch before (or its first entry) to its last day. */
export type JournalPeriod = { from: string; to: string };

/** The finance.accountCodes setting, or none (the journal's account codes are then empty); a value not of its shape counts as unset. */
async function accountCodes(db: Db): Promise<z.infer<(typeof KNOWN_SETTINGS)['finance.accountCodes']> | null> {
  const parsed = KNOWN_SETTINGS['finance.accountCodes'].safeParse(
    await settingsService(db).get('finance.accountCodes'),
  );
  return parsed.success ? parsed.data : null;
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

const futureTo = () =>
  BadRequest('Validation failed', { errors: [{ field: 'to', message: 'must not be in the future' }] });

/**
 * What a close's `to` asks for: the exclusive end (a plain date runs to its next UTC midnight, a
 * timestamp is the instant) and the earliest moment it may be closed (a date once its day has
 * begun, a timestamp once it has passed). A close never runs past its own moment, so today
 * closes up to now (see cutOf).
 */
function closeEndOf(to: string): { end: Date; earliest: Date } {
  if (!DATE_ONLY.test(to)) return { end: new Date(to), earliest: new Date(to) };
  const dayStart = Date.parse(`${to}T00:00:00.000Z`);
  return { end: new Date(dayStart + DAY_MS), earliest: new Date(dayStart) };
}

/** `to` read at this statement's moment: the exclusive end of what it takes (never after now), or 400 when it is still to come. */
async function cutOf(db: Db, to: string): Promise<Date> {
  const { end, earliest } = closeEndOf(to);
  const {
    rows: [cut],
  } = await toRaw<{ rows: { future: boolean; recorded_before: Date }[] }>(
    db,
    // to the millisecond, as a JS Date holds it: the batch's stored end is the one its entries were cut at
    sql`SELECT ${earliest}::timestamptz > statement_timestamp() AS future,
               date_trunc('milliseconds', least(${end}::timestamptz, statement_timestamp())) AS recorded_before`,
  );
  if (cut.future) throw futureTo();
  return cut.recorded_before;
}

/** The UTC month (YYYYMM) of the last instant a batch covers, the middle of its number. */
export const periodOf = (recordedBefore: Date) =>
  new Date(recordedBefore.getTime() - 1).toISOString().slice(0, 7).replace('-', '');

export const batchNotFound = () => NotFound('Recharge batch not found');

/** A line's quantity without trailing zeros, for a description ("2 x Beaker", "0.5 x Ethanol"). */
const QTY = (column: string) => `trim_scale(${column})::text`;

export function rechargeBatches(db: Db) {
  const find = async (ref: string): Promise<BatchRow> => {
    const query = db<BatchRow>('recharge_batches');
    const batch = await (/^\d+$/.test(ref) ? query.where('id', Number(ref)) : query.where('number', ref)).first();
    if (!batch) throw batchNotFound();
    return batch;
  };

  return {
    /**
     * Closes into a new batch, in one transaction, every sale and every refund line recorded before
     * `to`'s end (or before now, for today) and in no batch yet: a sale enters at its amounts as sold, the refund lines of one
     * sale as one negative entry (so a refund recorded after its sale was batched is an adjustment in
     * the next batch). Entries copy the charge code's cost centre and the amounts now, so the batch
     * never changes. Closes queue on a lock of recharge_batches, so a second close sees the first's
     * entries and takes what is left; nothing left answers 409 and writes nothing.
     */
    async close(actor: Actor, input: CloseBatch): Promise<BatchRecord> {
      const batch = await transaction(db, { audit: auditAs(actor) }, async (trx) => {
        await trx.raw('LOCK TABLE recharge_batches IN EXCLUSIVE MODE');
        // After the lock: "now" and this transaction's snapshot see every close and sale committed before ours.
        const recordedBefore = await cutOf(trx, input.to);
        const period = periodOf(recordedBefore);
        const {
          rows: [next],
        } = await toRaw<{ rows: { id: number; seq: number }[] }>(
          trx,
          sql`SELECT nextval('recharge_batches_id_seq')::int AS id, (SELECT coalesce(max(seq), 0) + 1 FROM recharge_batches WHERE period = ${period})::int AS seq`,
        );

        await toRaw(
          trx,
          sql`WITH refunds AS (${claimRefundLines(next.id, recordedBefore)}), refund_entries AS (
                SELECT 'refund' AS kind, s.sale_ref, s.sale_number, max(r.refund_recorded_at) AS recorded_at, s.sale_charge_code AS charge_code, ${costCentreOf('c')},
                       left('Refund on ' || s.sale_number || ': ' || string_agg(${sql.raw(QTY('r.refund_quantity'))} || ' x ' || si.line_item_name, ', ' ORDER BY si.line_id), 500) AS description,
                       -sum(r.refund_net) AS net_amount, -sum(r.refund_vat) AS vat_amount, -sum(r.refund_gross) AS gross_amount
                  FROM refunds r
                  JOIN ${saleById('s', sql.raw('r.refund_sale_ref'))}
                  JOIN ${saleLineById('si', sql.raw('r.refund_line_ref'))}
                  JOIN ${chargeCodeByCode('c', sql.raw('s.sale_charge_code'))}
                 GROUP BY s.sale_ref, s.sale_number, s.sale_charge_code, ${costCentreOf('c')}
              ), sale_entries AS (
                SELECT 'sale' AS kind, s.sale_ref, s.sale_number, s.sale_created_at AS recorded_at, s.sale_charge_code AS charge_code, ${costCentreOf('c')},
                       left('Sale ' || s.sale_number || ': ' || coalesce((SELECT string_agg(${sql.raw(QTY('si.line_quantity'))} || ' x ' || si.line_item_name, ', ' ORDER BY si.line_id)
                                                                          FROM ${linesOfSale('si', sql.raw('s.sale_ref'))}), ''), 500) AS description,
                       s.sale_net AS net_amount, s.sale_vat AS vat_amount, s.sale_gross AS gross_amount
                  FROM ${saleSummaries('s')}
                  JOIN ${chargeCodeByCode('c', sql.raw('s.sale_charge_code'))}
                 WHERE s.sale_created_at < ${recordedBefore}
                   AND NOT EXISTS (SELECT 1 FROM recharge_batch_entries e WHERE e.kind = 'sale' AND e.sale_ref = s.sale_ref)
              )
              INSERT INTO recharge_batch_entries (batch_id, kind, sale_ref, sale_number, recorded_at, charge_code, cost_centre, description, net_amount, vat_amount, gross_amount)
              SELECT ${next.id}, e.* FROM (SELECT * FROM sale_entries UNION ALL SELECT * FROM refund_entries) e
               ORDER BY e.cost_centre, e.charge_code, e.recorded_at, e.sale_ref, e.kind DESC`,
        );
        const {
          rows: [totals],
        } = await toRaw<{ rows: { sales: number; refunds: number; net: string; vat: string; gross: string }[] }>(
          trx,
          sql`SELECT count(*) FILTER (WHERE kind = 'sale')::int AS sales, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
                     coalesce(sum(net_amount), 0)::text AS net, coalesce(sum(vat_amount), 0)::text AS vat, coalesce(sum(gross_amount), 0)::text AS gross
                FROM recharge_batch_entries WHERE batch_id = ${next.id}`,
        );
        if (totals.sales + totals.refunds === 0) {
          throw Conflict(
            `Nothing to close: every sale and refund recorded before ${recordedBefore.toISOString()} is already in a batch`,
          );
        }
        const [row] = await trx<BatchRow>('recharge_batches')
          .insert({
            id: next.id,
            number: `RC-${period}-${next.seq}`,
            period,
            seq: next.seq,
            recorded_before: recordedBefore,
            closed_by: actor.userId,
            closed_by_email: actor.email,
            sales_count: totals.sales,
            refunds_count: totals.refunds,
            net_amount: totals.net,
            vat_amount: totals.vat,
            gross_amount: totals.gross,
          })
          .returning('*');
        return {
          result: row as BatchRow,
          audit: {
            entityType: 'recharge_batch',
            entityId: next.id,
            action: 'close',
            after: {
              number: row.number,
              recordedBefore,
              sales: totals.sales,
              refunds: totals.refunds,
              net: totals.net,
              vat: totals.vat,
              gross: totals.gross,
            },
          },
        };
      });
      return { batch, groups: await this.groups(batch.id) };
    },

    /**
     * What a close up to `to` would take now, summed per cost centre and charge code, writing
     * nothing: the close's selection (sales in no batch, refund lines in no batch, one refund entry
     * per sale) read without its lock, so a close in between may take some of it first.
     */
    async preview(input: CloseBatch): Promise<{ recordedBefore: Date; groups: BatchGroupRow[] }> {
      const recordedBefore = await cutOf(db, input.to);
      const { rows } = await toRaw<{ rows: BatchGroupRow[] }>(
        db,
        sql`WITH entries AS (
              SELECT 'sale' AS kind, ${costCentreOf('c')}, s.sale_charge_code AS charge_code, s.sale_net AS net, s.sale_vat AS vat, s.sale_gross AS gross
                FROM ${saleSummaries('s')}
                JOIN ${chargeCodeByCode('c', sql.raw('s.sale_charge_code'))}
               WHERE s.sale_created_at < ${recordedBefore}
                 AND NOT EXISTS (SELECT 1 FROM recharge_batch_entries e WHERE e.kind = 'sale' AND e.sale_ref = s.sale_ref)
              UNION ALL
              SELECT 'refund', ${costCentreOf('c')}, s.sale_charge_code, -sum(r.refund_net), -sum(r.refund_vat), -sum(r.refund_gross)
                FROM ${unbatchedRefundLines('r', recordedBefore)}
                JOIN ${saleById('s', sql.raw('r.refund_sale_ref'))}
                JOIN ${chargeCodeByCode('c', sql.raw('s.sale_charge_code'))}
               GROUP BY s.sale_ref, ${costCentreOf('c')}, s.sale_charge_code
            )
            SELECT cost_centre, charge_code, count(*) FILTER (WHERE kind = 'sale')::int AS sales, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
                   sum(net)::text AS net, sum(vat)::text AS vat, sum(gross)::text AS gross
              FROM entries GROUP BY cost_centre, charge_code ORDER BY cost_centre, charge_code`,
      );
      return { recordedBefore, groups: rows };
    },

    /** Newest first. */
    async list(page: number, limit: number): Promise<{ batches: BatchRow[]; total: number }> {
      const [batches, [{ n }]] = await allQueries(db, [
        () =>
          db<BatchRow>('recharge_batches')
            .orderBy([
              { column: 'closed_at', order: 'desc' },
              { column: 'id', order: 'desc' },
            ])
            .limit(limit)
            .offset((page - 1) * limit),
        () => db('recharge_batches').select(db.raw('count(*)::int AS n')),
      ]);
      return { batches, total: n as number };
    },

    /** A batch by id ("12") or number ("RC-202611-1"), with its entries summed per cost centre and charge code. */
    async get(ref: string): Promise<BatchRecord> {
      const batch = await find(ref);
      return { batch, groups: await this.groups(batch.id) };
    },

    async groups(batchId: number): Promise<BatchGroupRow[]> {
      const { rows } = await toRaw<{ rows: BatchGroupRow[] }>(
        db,
        sql`SELECT cost_centre, charge_code, count(*) FILTER (WHERE kind = 'sale')::int AS sales, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
                   sum(net_amount)::text AS net, sum(vat_amount)::text AS vat, sum(gross_amount)::text AS gross
              FROM recharge_batch_entries WHERE batch_id = ${batchId}
             GROUP BY cost_centre, charge_code ORDER BY cost_centre, charge_code`,
      );
      return rows;
    },

    /**
     * The batch (404 before anything is sent), the period it covers, and its journal in batch
     * order, a few thousand entries at a time: an entry is split by the account code of its lines
     * (finance.accountCodes: the code of the line's item's category, by id or name, else the
     * default), each part summed from the sale's lines or the batch's refund lines, which add up
     * to the entry (a sale's amounts are the sums of its rounded lines, a refund entry the sum of
     * its refund lines). A line's category is its item's now.
     */
    async journal(
      ref: string,
    ): Promise<{ batch: BatchRow; period: JournalPeriod; entries: AsyncGenerator<JournalRow[]> }> {
      const batch = await find(ref);
      const [codes, [{ previous_end: previousEnd }], [{ first_entry: firstEntry }]] = await allQueries(db, [
        () => accountCodes(db),
        () => db('recharge_batches').where('id', '<', batch.id).select(db.raw('max(recorded_before) AS previous_end')),
        () =>
          db('recharge_batch_entries').where('batch_id', batch.id).select(db.raw('min(recorded_at) AS first_entry')),
      ]);
      const start: Date = previousEnd ?? firstEntry ?? batch.recorded_before;
      const period = { from: isoDay(start), to: isoDay(new Date(batch.recorded_before.getTime() - 1)) };
      const byCategory = JSON.stringify(codes?.byCategory ?? {});
      const fallback = codes?.default ?? '';
      // The journal reads a batch's entries by id ranges from its lowest to its highest id: each page
      // is an index range of known width, whatever the statistics say right after a close (a keyset
      // page with LIMIT was planned as a scan of all the rest and a sort). Closes are serialised and
      // write their entries in one INSERT, so a batch's ids are consecutive and every page is full;
      // a gap would only make a page shorter.
      async function* entries() {
        const [{ lo, hi }] = await db('recharge_batch_entries')
          .where('batch_id', batch.id)
          .select(db.raw('min(id) AS lo'), db.raw('max(id) AS hi'));
        if (lo === null) return;
        for (let from = Number(lo); from <= Number(hi); from += JOURNAL_BATCH) {
          const { rows } = await toRaw<{ rows: JournalRow[] }>(
            db,
            sql`WITH e AS (SELECT id, kind, sale_ref, recorded_at, cost_centre, charge_code, sale_number FROM recharge_batch_entries
                            WHERE batch_id = ${batch.id} AND id >= ${from} AND id < ${from + JOURNAL_BATCH}),
                     lines AS (SELECT e.id AS entry_id, si.line_id, si.line_item_id AS item_id, si.line_item_name AS item_name, si.line_quantity AS quantity,
                                      si.line_net AS net, si.line_vat AS vat, si.line_gross AS gross
                                 FROM e JOIN ${saleLinesOf('si', sql.raw('e.sale_ref'))} WHERE e.kind = 'sale'
                               UNION ALL
                               SELECT e.id, si.line_id, si.line_item_id, si.line_item_name, r.refund_quantity, -r.refund_net, -r.refund_vat, -r.refund_gross
                                 FROM e JOIN ${batchRefundLinesOf('r', sql.raw('e.sale_ref'), batch.id)}
                                 JOIN ${saleLineById('si', sql.raw('r.refund_line_ref'))} WHERE e.kind = 'refund'),
                     coded AS (SELECT l.*, coalesce(${byCategory}::jsonb ->> cat.category_id::text, ${byCategory}::jsonb ->> cat.category_name, ${fallback}) AS account_code
                                 FROM lines l LEFT JOIN ${itemRefs('i')} ON i.item_id = l.item_id LEFT JOIN ${categoryRefs('cat')} ON cat.category_id = i.item_category_id)
                SELECT e.id, to_char(e.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, e.cost_centre, e.charge_code, e.sale_number, k.account_code,
                       left(CASE e.kind WHEN 'sale' THEN 'Sale ' ELSE 'Refund on ' END || e.sale_number || ': '
                            || string_agg(${sql.raw(QTY('k.quantity'))} || ' x ' || k.item_name, ', ' ORDER BY k.line_id), 500) AS description,
                       sum(k.net)::text AS net_amount, sum(k.vat)::text AS vat_amount, sum(k.gross)::text AS gross_amount,
                       CASE e.kind WHEN 'sale' THEN sum(k.gross)::text END AS debit, CASE e.kind WHEN 'refund' THEN (-sum(k.gross))::text END AS credit
                  FROM e JOIN coded k ON k.entry_id = e.id
                 GROUP BY e.id, e.kind, e.recorded_at, e.cost_centre, e.charge_code, e.sale_number, k.account_code
                 ORDER BY e.id, k.account_code`,
          );
          if (rows.length > 0) yield rows;
        }
      }
      return { batch, period, entries: entries() };
    },
  };
}

/** Groups summed per cost centre, in decimal arithmetic, cost centres and their codes in name order. */
export function byCostCentre(groups: BatchGroupRow[]) {
  const centres = new Map<
    string,
    { costCentre: string; sales: number; refunds: number; net: D; vat: D; gross: D; chargeCodes: BatchGroupRow[] }
  >();
  for (const g of groups) {
    const c = centres.get(g.cost_centre) ?? {
      costCentre: g.cost_centre,
      sales: 0,
      refunds: 0,
      net: new D(0),
      vat: new D(0),
      gross: new D(0),
      chargeCodes: [],
    };
    c.sales += g.sales;
    c.refunds += g.refunds;
    c.net = c.net.plus(g.net);
    c.vat = c.vat.plus(g.vat);
    c.gross = c.gross.plus(g.gross);
    c.chargeCodes.push(g);
    centres.set(g.cost_centre, c);
  }
  return [...centres.values()];
}
