import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { amountNumber, D } from '../../lib/money';
import { applySalesFilter, type SalesFilterInput } from './sales.filters';
import { pageInfo } from '../../http/pagination';

export const REPORT_CSV_HEADER = 'Sale ID,Charge Code,Total Amount,Customer Info,Notes,Status,Processed By,Date,Items Count';

const CSV_BATCH = 1000;

type ReportRow = {
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

const customerInfo = (r: Pick<ReportRow, 'delivered_to' | 'delivered_to_email'>) =>
  [r.delivered_to, r.delivered_to_email ? `<${r.delivered_to_email}>` : null].filter(Boolean).join(' ');

const processedByName = (r: Pick<ReportRow, 'first_name' | 'last_name'>) => [r.first_name, r.last_name].filter(Boolean).join(' ');

export function salesReports(db: Db) {
  const reportRows = (filter: SalesFilterInput) =>
    applySalesFilter(
      db('sales as s')
        .leftJoin('users as u', 'u.id', 's.processed_by')
        .leftJoin('charge_codes as c', 'c.code', 's.charge_code'),
      filter,
    );

  return {
    /** The spec's JSON report: summary and per-department figures over the whole filtered range, one page of sales. */
    async json(filter: SalesFilterInput, page: number, limit: number) {
      // One pass over the range, grouped by charge code (few groups); the summary and the
      // per-department figures are derived from those groups in decimal arithmetic.
      const byCode = await applySalesFilter(db('sales as s'), filter)
        .groupBy('s.charge_code')
        .select('s.charge_code', db.raw('count(*)::int AS total_sales'), db.raw('sum(s.total_amount)::text AS total_amount'));
      const centres = new Map<string, string>(
        (await db('charge_codes').whereIn('code', byCode.map((g) => g.charge_code)).select('code', 'cost_centre')).map((c) => [c.code, c.cost_centre]),
      );
      let totalSales = 0;
      let totalAmount = new D(0);
      const departmentTotals = new Map<string, { totalSales: number; totalAmount: D }>();
      for (const group of byCode) {
        totalSales += group.total_sales as number;
        totalAmount = totalAmount.plus(group.total_amount);
        const department = centres.get(group.charge_code) || 'Unassigned';
        const entry = departmentTotals.get(department) ?? { totalSales: 0, totalAmount: new D(0) };
        entry.totalSales += group.total_sales as number;
        entry.totalAmount = entry.totalAmount.plus(group.total_amount);
        departmentTotals.set(department, entry);
      }
      const departments = [...departmentTotals]
        .sort(([a, x], [b, y]) => y.totalAmount.comparedTo(x.totalAmount) || a.localeCompare(b))
        .map(([department, d]) => ({ department, totalSales: d.totalSales, totalAmount: d.totalAmount.toNumber() }));
      const rows: ReportRow[] = await reportRows(filter)
        .orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.id', order: 'desc' }])
        .limit(limit)
        .offset((page - 1) * limit)
        .select('s.*', 'u.first_name', 'u.last_name', 'c.cost_centre as department');
      const lines =
        rows.length === 0
          ? []
          : await db('sale_items')
              .whereIn('sale_id', rows.map((r) => r.id))
              .orderBy('id')
              .select('sale_id', 'item_name', 'item_sku', 'quantity', 'unit_price');
      const total = totalSales;
      return {
        success: true,
        data: {
          summary: { totalSales: total, totalAmount: totalAmount.toNumber(), uniqueChargeCodes: byCode.length },
          departmentSummary: departments,
          sales: rows.map((r) => ({
            id: r.id,
            saleId: r.sale_id,
            chargeCode: r.charge_code,
            department: r.department,
            subtotalAmount: r.subtotal_amount,
            vatAmount: r.vat_amount,
            totalAmount: r.total_amount,
            total: amountNumber(r.total_amount),
            refundedAmount: r.refunded_amount,
            status: r.status,
            isPaid: r.is_paid,
            customerNotes: r.customer_notes,
            deliveredTo: r.delivered_to,
            deliveredToEmail: r.delivered_to_email,
            deliveredAt: r.delivered_at?.toISOString() ?? null,
            createdAt: r.created_at.toISOString(),
            processedBy: { firstName: r.first_name ?? '', lastName: r.last_name ?? '' },
            items: lines
              .filter((l) => l.sale_id === r.id)
              .map((l) => ({ itemName: l.item_name, itemSku: l.item_sku, quantity: l.quantity, unitPrice: l.unit_price })),
          })),
          pagination: pageInfo(page, limit, total),
        },
      };
    },

    /**
     * Every filtered sale as CSV, newest first, written in keyset-paged batches with
     * back-pressure, so memory stays flat however many sales the range holds.
     */
    async csv(filter: SalesFilterInput, out: Writable) {
      const write = async (chunk: string) => {
        if (!out.write(chunk)) await once(out, 'drain');
      };
      await write(`${REPORT_CSV_HEADER}\n`);
      const names = new Map<string, string>();
      // The cursor keeps created_at as PostgreSQL's text (microseconds); a JS Date would truncate it.
      let after: { createdAt: string; id: number } | undefined;
      for (;;) {
        // One index range scan per batch on sales(created_at, id); names and line counts come per batch.
        const query = applySalesFilter(db('sales as s'), filter)
          .orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.id', order: 'desc' }])
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
        const rows: (ReportRow & { processed_by: string | null; cursor_at: string })[] = await query;
        if (rows.length === 0) break;

        const counts = new Map<number, number>(
          (
            await db('sale_items')
              .whereIn('sale_id', rows.map((r) => r.id))
              .groupBy('sale_id')
              .select('sale_id', db.raw('count(*)::int AS n'))
          ).map((c) => [c.sale_id as number, c.n as number]),
        );
        const unknownUsers = [...new Set(rows.map((r) => r.processed_by).filter((id): id is string => id !== null && !names.has(id)))];
        if (unknownUsers.length > 0) {
          for (const u of await db('users').whereIn('id', unknownUsers).select('id', 'first_name', 'last_name')) {
            names.set(u.id, processedByName(u));
          }
        }

        await write(
          stringify(
            rows.map((r) => [
              r.sale_id,
              r.charge_code,
              r.total_amount,
              customerInfo(r),
              r.customer_notes ?? '',
              r.status,
              r.processed_by ? (names.get(r.processed_by) ?? '') : '',
              r.created_at.toISOString(),
              String(counts.get(r.id) ?? 0),
            ]),
            { quoted: true, quoted_empty: true },
          ),
        );
        if (rows.length < CSV_BATCH) break;
        const last = rows[rows.length - 1];
        after = { createdAt: last.cursor_at, id: last.id };
      }
    },
  };
}
