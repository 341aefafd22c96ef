import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import { sql, toRaw, type Sql } from '../../db/sql';
import { D } from '../../lib/money';
import { chargeCodeByCode, codesOfCostCentre, costCentreOf } from '../chargecodes/chargecodes.queries';
import { refundedShare, refundedSharesOf, saleLinesInOrder, saleLinesOf, saleSummaries } from '../sales/sales.queries';
import type { RechargeFilter } from './finance.schemas';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const STREAM_SALES = 1000;

/** One cost centre and charge code of the report: amounts after refunds, decimal strings. */
export type RechargeGroupRow = {
  cost_centre: string;
  charge_code: string;
  sales: number;
  net: string;
  vat: string;
  gross: string;
  paid: string;
  unpaid: string;
  sold_net: string;
  sold_vat: string;
  sold_gross: string;
};

export type RechargeFigures = {
  sales: number;
  net: D;
  vat: D;
  gross: D;
  paid: D;
  unpaid: D;
  soldNet: D;
  soldVat: D;
  soldGross: D;
};

export type RechargeReportRecord = { filter: RechargeFilter; groups: RechargeGroupRow[]; totals: RechargeFigures };

/**
 * One sale line: as sold, its refunded quantity, and its amounts less its refunded share (rounded as
 * the refund rounded it). Amounts and quantities come as PostgreSQL prints numeric(14,2) (2 places),
 * the date as ISO 8601 UTC text: the exports write them as they are, with no per-cell parsing.
 */
export type RechargeLineRow = {
  sale_id: string;
  date: string;
  cost_centre: string;
  charge_code: string;
  item_name: string;
  item_sku: string;
  quantity: string;
  unit_price: string;
  subtotal: string;
  vat_amount: string;
  total_with_vat: string;
  refunded_quantity: string;
  net_after: string;
  vat_after: string;
  gross_after: string;
};

/**
 * The sales a report covers (alias s, the sales module's saleSummaries): recorded in [from, to] as the other reports read dates (a
 * plain `to` covers its whole UTC day), on the charge code and/or the cost centre given (exact).
 * Quotes are not sales and never counted.
 */
export function rechargeSalesWhere({ from, to, costCentre, chargeCode }: RechargeFilter): Sql {
  const conditions: Sql[] = [sql.raw('true')];
  if (from)
    conditions.push(sql`s.sale_created_at >= ${new Date(DATE_ONLY.test(from) ? `${from}T00:00:00.000Z` : from)}`);
  if (to) {
    conditions.push(
      DATE_ONLY.test(to)
        ? sql`s.sale_created_at < ${new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS)}`
        : sql`s.sale_created_at <= ${new Date(to)}`,
    );
  }
  if (chargeCode) conditions.push(sql`s.sale_charge_code = ${chargeCode}`);
  if (costCentre) conditions.push(sql`s.sale_charge_code IN ${codesOfCostCentre(costCentre)}`);
  return sql.join(conditions, sql.raw(' AND '));
}

/** The sum of the groups' figures, in decimal arithmetic. */
export function totalsOf(groups: RechargeGroupRow[]): RechargeFigures {
  const zero = new D(0);
  return groups.reduce<RechargeFigures>(
    (t, g) => ({
      sales: t.sales + g.sales,
      net: t.net.plus(g.net),
      vat: t.vat.plus(g.vat),
      gross: t.gross.plus(g.gross),
      paid: t.paid.plus(g.paid),
      unpaid: t.unpaid.plus(g.unpaid),
      soldNet: t.soldNet.plus(g.sold_net),
      soldVat: t.soldVat.plus(g.sold_vat),
      soldGross: t.soldGross.plus(g.sold_gross),
    }),
    {
      sales: 0,
      net: zero,
      vat: zero,
      gross: zero,
      paid: zero,
      unpaid: zero,
      soldNet: zero,
      soldVat: zero,
      soldGross: zero,
    },
  );
}

/**
 * The finance recharges: what each cost centre took per charge code over a range of sale dates,
 * net of every refund made on those sales so far (the batches, not this report, date a refund by
 * when it was recorded).
 */
export function financeService(db: Db) {
  return {
    /**
     * Per cost centre (the charge code's, now) and charge code: sales, net/VAT/gross after refunds,
     * paid and unpaid gross. Only refunded sales have their lines read, for the net share refunded.
     */
    async report(filter: RechargeFilter): Promise<RechargeReportRecord> {
      const { rows } = await toRaw<{ rows: RechargeGroupRow[] }>(
        db,
        sql`WITH sold AS (SELECT s.sale_ref, s.sale_charge_code, s.sale_is_paid, s.sale_net, s.sale_vat, s.sale_gross, s.sale_refunded
                            FROM ${saleSummaries('s')} WHERE ${rechargeSalesWhere(filter)}),
                 r AS (${refundedSharesOf(sql.raw('SELECT sale_ref FROM sold WHERE sale_refunded > 0'))}),
                 a AS (SELECT sold.sale_charge_code AS charge_code, sold.sale_is_paid AS is_paid, sold.sale_net AS subtotal_amount,
                              sold.sale_vat AS vat_amount, sold.sale_gross AS total_amount,
                              sold.sale_net - coalesce(r.refunded_net, 0) AS net, sold.sale_gross - coalesce(r.refunded_gross, 0) AS gross
                         FROM sold LEFT JOIN r ON r.sale_ref = sold.sale_ref)
            SELECT ${costCentreOf('c')}, a.charge_code, count(*)::int AS sales,
                   sum(a.net)::text AS net, (sum(a.gross) - sum(a.net))::text AS vat, sum(a.gross)::text AS gross,
                   coalesce(sum(a.gross) FILTER (WHERE a.is_paid), 0)::text AS paid,
                   coalesce(sum(a.gross) FILTER (WHERE NOT a.is_paid), 0)::text AS unpaid,
                   sum(a.subtotal_amount)::text AS sold_net, sum(a.vat_amount)::text AS sold_vat, sum(a.total_amount)::text AS sold_gross
              FROM a JOIN ${chargeCodeByCode('c', sql.raw('a.charge_code'))}
             GROUP BY ${costCentreOf('c')}, a.charge_code
             ORDER BY ${costCentreOf('c')}, a.charge_code`,
      );
      return { filter, groups: rows, totals: totalsOf(rows) };
    },

    /** One page of the report's sale lines, oldest sale first, with the number of lines in the whole range. */
    async linesPage(
      filter: RechargeFilter,
      page: number,
      limit: number,
    ): Promise<{ lines: RechargeLineRow[]; total: number }> {
      const where = rechargeSalesWhere(filter);
      const [{ rows }, { rows: count }] = await allQueries(db, [
        () =>
          toRaw<{ rows: RechargeLineRow[] }>(
            db,
            sql`${linesSelect(saleSummaries('s'), where)} ORDER BY s.sale_created_at, s.sale_ref, si.line_id LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
          ),
        () =>
          toRaw<{ rows: { n: number }[] }>(
            db,
            sql`SELECT count(*)::int AS n FROM ${saleSummaries('s')} JOIN ${saleLinesOf('si', sql.raw('s.sale_ref'))} WHERE ${where}`,
          ),
      ]);
      return { lines: rows, total: count[0].n };
    },

    /**
     * Every line of the report's sales, oldest sale first, yielded a thousand sales at a time
     * (keyset over sales(created_at, id)); the next batch is read only when the consumer asks for
     * it (after writing the last), so memory stays flat however long the range.
     */
    async *lines(filter: RechargeFilter): AsyncGenerator<RechargeLineRow[]> {
      const where = rechargeSalesWhere(filter);
      // The cursor keeps created_at as PostgreSQL's text (microseconds); a JS Date would truncate it.
      let after: Sql = sql.raw('true');
      for (;;) {
        const { rows } = await toRaw<{ rows: (RechargeLineRow & { cursor_at: string; sale_ref: number })[] }>(
          db,
          // the batch's sales are cut first (an index range scan), then only their lines are joined
          sql`WITH p AS (SELECT s.sale_ref, s.sale_number, s.sale_created_at, s.sale_charge_code FROM ${saleSummaries('s')}
                          WHERE ${where} AND ${after} ORDER BY s.sale_created_at, s.sale_ref LIMIT ${STREAM_SALES})
              ${linesSelect(sql.raw('p s'), sql.raw('true'), sql.raw(', s.sale_ref, s.sale_created_at::text AS cursor_at'), PER_SALE_LINES)}
              ORDER BY s.sale_created_at, s.sale_ref, si.line_id`,
        );
        if (rows.length === 0) return;
        yield rows;
        const last = rows[rows.length - 1];
        after = sql`(s.sale_created_at, s.sale_ref) > (${last.cursor_at}::timestamptz, ${last.sale_ref})`;
      }
    },
  };
}

/** A timestamptz as ISO 8601 UTC text with milliseconds, as Date.toISOString() writes it. */
export const ISO_UTC = (column: string) =>
  sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** sale_items joined to each sale in turn (an index scan per sale): a plain join to the thousand sales of a CTE is planned as a scan of every line. */
const PER_SALE_LINES = sql`CROSS JOIN LATERAL ${saleLinesInOrder('si', sql.raw('s.sale_ref'))}`;
const JOINED_LINES = sql`JOIN ${saleLinesOf('si', sql.raw('s.sale_ref'))}`;

/**
 * The lines of the sales `from` (aliased s: saleSummaries, or a CTE with its sale_ref, sale_number,
 * sale_created_at and sale_charge_code) that match `where`.
 */
const linesSelect = (from: Sql, where: Sql, extra: Sql = sql.raw(''), lines: Sql = JOINED_LINES) =>
  sql`SELECT s.sale_number AS sale_id, ${ISO_UTC('s.sale_created_at')} AS date, ${costCentreOf('c')}, s.sale_charge_code AS charge_code,
             si.line_item_name AS item_name, si.line_item_sku AS item_sku, si.line_quantity AS quantity, si.line_unit_price AS unit_price,
             si.line_net AS subtotal, si.line_vat AS vat_amount, si.line_gross AS total_with_vat, si.line_refunded_quantity AS refunded_quantity,
             (si.line_net - ${refundedShare('si', 'line_net')})::text AS net_after,
             ((si.line_gross - ${refundedShare('si', 'line_gross')}) - (si.line_net - ${refundedShare('si', 'line_net')}))::text AS vat_after,
             (si.line_gross - ${refundedShare('si', 'line_gross')})::text AS gross_after${extra}
        FROM ${from}
        ${lines}
        JOIN ${chargeCodeByCode('c', sql.raw('s.sale_charge_code'))}
       WHERE ${where}`;
