import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { chargeCodeByCode, costCentreOf } from '../chargecodes/chargecodes.queries';
import { leftJoinUserRef, userNames, userRefSelect } from '../users/users.queries';
import { D } from '../../lib/money';
import { byDepartment, chargeCodeFiguresSql, type ChargeCodeFiguresRow } from './sales.figures';
import { applySalesFilter, resolveSalesFilter, salesRaw, salesWhere, type SalesFilterInput } from './sales.filters';

const CSV_BATCH = 1000;

export type ReportRow = {
  id: number;
  sale_id: string;
  charge_code: string;
  subtotal_amount: string;
  vat_amount: string;
  total_amount: string;
  refunded_amount: string;
  customer_notes: string | null;
  status: string;
  is_paid: boolean;
  delivered_to: string | null;
  delivered_to_email: string | null;
  delivered_at: Date | null;
  created_at: Date;
  first_name: string | null;
  last_name: string | null;
  department: string | null;
};

export type ReportLineRow = { item_name: string; item_sku: string; quantity: string; unit_price: string };

/** The JSON report: figures over the whole filtered range (amounts in decimal arithmetic) and one page of sales with their lines. */
export type SalesReportRecord = {
  summary: { totalSales: number; totalAmount: D; uniqueChargeCodes: number };
  /** by the charge codes' cost centre ('Unassigned' without one), the largest amount first */
  departments: { department: string; totalSales: number; totalAmount: D }[];
  sales: (ReportRow & { lines: ReportLineRow[] })[];
};

/** The sales columns of a ReportRow, and processed_by for the join to who processed it. */
const REPORT_COLUMNS = `s.id, s.sale_id, s.charge_code, s.subtotal_amount, s.vat_amount, s.total_amount, s.refunded_amount, s.customer_notes,
  s.status, s.is_paid, s.processed_by, s.delivered_to, s.delivered_to_email, s.delivered_at, s.created_at`;

/** A report row's lines as JSON, in line order; decimals stay strings. */
const REPORT_LINES = `(SELECT coalesce(json_agg(json_build_object('item_name', si.item_name, 'item_sku', si.item_sku,
    'quantity', si.quantity::text, 'unit_price', si.unit_price::text) ORDER BY si.id), '[]') FROM sale_items si WHERE si.sale_id = p.id) AS lines`;

export type CsvSaleRow = Pick<
  ReportRow,
  | 'id'
  | 'sale_id'
  | 'charge_code'
  | 'total_amount'
  | 'customer_notes'
  | 'status'
  | 'delivered_to'
  | 'delivered_to_email'
  | 'created_at'
> & { processed_by: string | null };

/** A sale of the CSV report with the name of who processed it (null: nobody, or a user since deleted) and its number of lines. */
export type CsvSaleRecord = {
  sale: CsvSaleRow;
  processedBy: { first_name: string; last_name: string } | null;
  itemsCount: number;
};

export function salesReports(db: Db) {
  return {
    /** The spec's JSON report: summary and per-department figures over the whole filtered range, one page of sales. */
    async json(input: SalesFilterInput, page: number, limit: number): Promise<SalesReportRecord> {
      const filter = await resolveSalesFilter(db, input);
      // One statement: the figures (as JSON, on the first row only) and the page, which is cut from
      // the sales alone; who processed each, its department and its lines are read for its rows only.
      const { rows } = await salesRaw<{
        rows: (ReportRow & { lines: ReportLineRow[]; figures: ChargeCodeFiguresRow[] | null })[];
      }>(
        db,
        filter,
        sql`WITH figures AS (${chargeCodeFiguresSql(filter)}),
                 page AS (SELECT ${sql.raw(REPORT_COLUMNS)} FROM sales s WHERE ${salesWhere(filter)}
                           ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit})
            SELECT CASE WHEN row_number() OVER (ORDER BY p.created_at DESC, p.id DESC) = 1 THEN fig.figures END AS figures,
                   p.*, ${userRefSelect('')}, ${costCentreOf('c')} AS department, ${sql.raw(REPORT_LINES)}
              FROM (SELECT coalesce(json_agg(figures ORDER BY figures.key), '[]') AS figures FROM figures) fig
              LEFT JOIN page p ON true
              ${leftJoinUserRef('', sql.raw('p.processed_by'))}
              LEFT JOIN ${chargeCodeByCode('c', sql.raw('p.charge_code'))}
             ORDER BY p.created_at DESC, p.id DESC`,
      );
      const byCode = rows[0].figures ?? [];
      const sales = rows.filter((r) => r.id !== null).map(({ figures: _onFirstRow, ...sale }) => sale);
      const departments = byDepartment(byCode, 'totalAmount').map((d) => ({
        department: d.department,
        totalSales: d.sales,
        totalAmount: d.totalAmount,
      }));
      const totalSales = byCode.reduce((sum, g) => sum + g.sales, 0);
      const totalAmount = byCode.reduce((sum, g) => sum.plus(g.total_amount), new D(0));
      return { summary: { totalSales, totalAmount, uniqueChargeCodes: byCode.length }, departments, sales };
    },

    /**
     * Every filtered sale for the CSV, newest first, in keyset-paged batches handed to onBatch: the
     * next batch is read only once onBatch has settled (written the last), so memory stays flat
     * however many sales the range holds.
     */
    async forEachCsvBatch(input: SalesFilterInput, onBatch: (batch: CsvSaleRecord[]) => Promise<void>): Promise<void> {
      const filter = await resolveSalesFilter(db, input);
      const names = new Map<string, { first_name: string; last_name: string }>();
      // The cursor keeps created_at as PostgreSQL's text (microseconds); a JS Date would truncate it.
      let after: { createdAt: string; id: number } | undefined;
      for (;;) {
        // One index range scan per batch on sales(created_at, id); names and line counts come per batch.
        const query = applySalesFilter(db('sales as s'), filter)
          .orderBy([
            { column: 's.created_at', order: 'desc' },
            { column: 's.id', order: 'desc' },
          ])
          .limit(CSV_BATCH)
          .select(
            's.id',
            's.sale_id',
            's.charge_code',
            's.total_amount',
            's.customer_notes',
            's.status',
            's.processed_by',
            's.delivered_to',
            's.delivered_to_email',
            's.created_at',
            db.raw('s.created_at::text AS cursor_at'),
          );
        if (after) query.where(toRaw(db, sql`(s.created_at, s.id) < (${after.createdAt}::timestamptz, ${after.id})`));
        const rows: (CsvSaleRow & { cursor_at: string })[] = await query;
        if (rows.length === 0) return;

        const counts = new Map<number, number>(
          (
            await db('sale_items')
              .whereIn(
                'sale_id',
                rows.map((r) => r.id),
              )
              .groupBy('sale_id')
              .select('sale_id', db.raw('count(*)::int AS n'))
          ).map((c) => [c.sale_id as number, c.n as number]),
        );
        const unknownUsers = [
          ...new Set(rows.map((r) => r.processed_by).filter((id): id is string => id !== null && !names.has(id))),
        ];
        if (unknownUsers.length > 0) {
          for (const u of await userNames(db, unknownUsers)) names.set(u.id, u);
        }

        await onBatch(
          rows.map((r) => ({
            sale: r,
            processedBy: r.processed_by ? (names.get(r.processed_by) ?? null) : null,
            itemsCount: counts.get(r.id) ?? 0,
          })),
        );
        if (rows.length < CSV_BATCH) return;
        const last = rows[rows.length - 1];
        after = { createdAt: last.cursor_at, id: last.id };
      }
    },
  };
}
