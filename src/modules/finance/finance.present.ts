import { pageInfo } from '../../http/pagination';
import { D, money } from '../../lib/money';
import { byCostCentre, type BatchGroupRow, type BatchRecord, type BatchRow } from './finance.batches';
import type { RechargeFigures, RechargeGroupRow, RechargeLineRow, RechargeReportRecord } from './finance.service';

export const presentRechargeGroup = (g: RechargeGroupRow) => ({
  costCentre: g.cost_centre,
  chargeCode: g.charge_code,
  sales: g.sales,
  net: money(g.net),
  vat: money(g.vat),
  gross: money(g.gross),
  paid: money(g.paid),
  unpaid: money(g.unpaid),
});

export const presentRechargeTotals = (t: RechargeFigures) => ({
  sales: t.sales,
  net: money(t.net),
  vat: money(t.vat),
  gross: money(t.gross),
  paid: money(t.paid),
  unpaid: money(t.unpaid),
});

export const presentRechargeLine = (l: RechargeLineRow) => ({
  saleId: l.sale_id,
  date: l.date,
  costCentre: l.cost_centre,
  chargeCode: l.charge_code,
  item: l.item_name,
  sku: l.item_sku,
  quantity: money(l.quantity),
  unitPrice: money(l.unit_price),
  net: money(l.subtotal),
  vat: money(l.vat_amount),
  gross: money(l.total_with_vat),
  refundedQuantity: money(l.refunded_quantity),
  netAfterRefunds: money(l.net_after),
  vatAfterRefunds: money(l.vat_after),
  grossAfterRefunds: money(l.gross_after),
});

export function presentRechargeReport(
  report: RechargeReportRecord,
  lines?: { lines: RechargeLineRow[]; total: number; page: number; limit: number },
) {
  const { from, to, costCentre, chargeCode } = report.filter;
  return {
    filter: { from: from ?? null, to: to ?? null, costCentre: costCentre ?? null, chargeCode: chargeCode ?? null },
    groups: report.groups.map(presentRechargeGroup),
    totals: presentRechargeTotals(report.totals),
    ...(lines
      ? { lines: lines.lines.map(presentRechargeLine), linesPagination: pageInfo(lines.page, lines.limit, lines.total) }
      : {}),
  };
}

const batchFigures = (f: {
  sales: number;
  refunds: number;
  net: string | { toString(): string };
  vat: string | { toString(): string };
  gross: string | { toString(): string };
}) => ({
  sales: f.sales,
  refunds: f.refunds,
  net: money(f.net.toString()),
  vat: money(f.vat.toString()),
  gross: money(f.gross.toString()),
});

export const presentBatchSummary = (b: BatchRow) => ({
  id: b.id,
  number: b.number,
  recordedBefore: b.recorded_before.toISOString(),
  closedAt: b.closed_at.toISOString(),
  closedBy: b.closed_by_email,
  ...batchFigures({
    sales: b.sales_count,
    refunds: b.refunds_count,
    net: b.net_amount,
    vat: b.vat_amount,
    gross: b.gross_amount,
  }),
});

export const presentBatch = ({ batch, groups }: BatchRecord) => ({
  ...presentBatchSummary(batch),
  costCentres: byCostCentre(groups).map((c) => ({
    costCentre: c.costCentre,
    ...batchFigures(c),
    chargeCodes: c.chargeCodes.map((g: BatchGroupRow) => ({ chargeCode: g.charge_code, ...batchFigures(g) })),
  })),
});

export const presentBatchClosed = (record: BatchRecord) => ({
  message: `Recharge batch ${record.batch.number} closed: ${record.batch.sales_count} sales, ${record.batch.refunds_count} refund adjustments, gross ${money(record.batch.gross_amount)}`,
  batch: presentBatch(record),
});

export const presentBatchList = (list: { batches: BatchRow[]; total: number }, page: number, limit: number) => ({
  batches: list.batches.map(presentBatchSummary),
  pagination: pageInfo(page, limit, list.total),
});

/** What a close would take (pages: the preview before Close batch), per cost centre and in total, as a batch presents them. */
export function presentBatchPreview({ recordedBefore, groups }: { recordedBefore: Date; groups: BatchGroupRow[] }) {
  const costCentres = byCostCentre(groups);
  const total = costCentres.reduce(
    (t, c) => ({
      sales: t.sales + c.sales,
      refunds: t.refunds + c.refunds,
      net: t.net.plus(c.net),
      vat: t.vat.plus(c.vat),
      gross: t.gross.plus(c.gross),
    }),
    {
      sales: 0,
      refunds: 0,
      net: new D(0),
      vat: new D(0),
      gross: new D(0),
    },
  );
  return {
    recordedBefore: recordedBefore.toISOString(),
    ...batchFigures(total),
    costCentres: costCentres.map((c) => ({ costCentre: c.costCentre, ...batchFigures(c) })),
  };
}
