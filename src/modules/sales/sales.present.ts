import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { pageInfo } from '../../http/pagination';
import { amountNumber, D, quantityNumber } from '../../lib/money';
import { spreadsheetText } from '../../lib/spreadsheet-safe';
import type { LowStockItem } from '../items/items.queries';
import type { MostSoldRow, StockCheckLine } from './sales.analytics';
import { presentUserRef } from '../users/users.present';
import { presentLine } from './quotes.present';
import type { CsvSaleRecord, SalesReportRecord } from './sales.reports';
import type {
  ItemStat,
  MostSoldItems,
  SalesLowStockReport,
  StockCheckResult,
  Sale,
  SaleCreated,
  SalePaid,
  SalePaymentState,
  SaleProcessed,
  SaleRecipient,
  SaleRefund,
  SalesPage,
  SalesReport,
  SaleUnpaid,
} from './sales.schemas';
import type { RefundRecord, SaleLineWithLots, SaleRecord, SaleRow } from './sales.service';

export const presentSaleLine = (line: SaleLineWithLots) => ({
  ...presentLine(line),
  refundedQuantity: line.refunded_quantity,
  lots: line.lots,
});

export function presentSale({ sale: row, lines }: SaleRecord): Sale {
  return {
    id: row.id,
    saleId: row.sale_id,
    quoteId: row.quote_id,
    chargeCode: row.charge_code,
    subtotalAmount: row.subtotal_amount,
    vatAmount: row.vat_amount,
    totalAmount: row.total_amount,
    refundedAmount: row.refunded_amount,
    vatApplied: row.vat_applied,
    customerNotes: row.customer_notes,
    coshhReference: row.coshh_reference,
    status: row.status,
    isPaid: row.is_paid,
    processedBy: row.u_id
      ? presentUserRef({
          id: row.u_id,
          email: row.u_email!,
          first_name: row.u_first_name!,
          last_name: row.u_last_name!,
        })
      : null,
    deliveredTo: row.delivered_to,
    deliveredToEmail: row.delivered_to_email,
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    items: lines.map(presentSaleLine),
  };
}

export const presentSalesPage = (
  { sales, total }: { sales: SaleRecord[]; total: number },
  page: number,
  limit: number,
): SalesPage => ({
  sales: sales.map(presentSale),
  pagination: pageInfo(page, limit, total),
});

export const presentSaleCreated = (sale: SaleRecord): SaleCreated => ({
  message: 'Sale created successfully',
  sale: presentSale(sale),
});

export const presentSaleProcessed = (sale: SaleRecord): SaleProcessed => ({
  message: 'Sale processed successfully',
  sale: presentSale(sale),
});

const paymentState = (row: SaleRow): SalePaymentState => ({
  id: row.id,
  saleId: row.sale_id,
  isPaid: row.is_paid,
  status: row.status,
  updatedAt: row.updated_at.toISOString(),
});

export function presentSalePaid(row: SaleRow): SalePaid {
  const state = paymentState(row);
  return { message: 'Sale marked as paid', ...state, sale: state };
}

export const presentSaleUnpaid = (row: SaleRow): SaleUnpaid => ({
  message: 'Sale marked as unpaid',
  sale: paymentState(row),
});

export const presentSaleRecipient = (row: SaleRow): SaleRecipient => ({
  message: 'Recipient recorded',
  sale: {
    id: row.id,
    saleId: row.sale_id,
    deliveredTo: row.delivered_to!,
    deliveredToEmail: row.delivered_to_email,
    deliveredAt: row.delivered_at!.toISOString(),
  },
});

export const presentSaleRefund = ({ sale, refunded }: RefundRecord): SaleRefund => ({
  message: sale.status === 'refunded' ? 'Sale fully refunded' : 'Sale partially refunded',
  sale: {
    id: sale.id,
    saleId: sale.sale_id,
    totalAmount: sale.total_amount,
    refundedAmount: sale.refunded_amount,
    status: sale.status,
  },
  refundedItems: refunded.map((r) => ({
    itemId: r.itemId,
    itemName: r.itemName,
    refundedQty: quantityNumber(r.quantity),
    stockRestored: true,
  })),
});

export const presentMostSoldItems = (rows: MostSoldRow[]): MostSoldItems => ({
  items: rows.map((r): ItemStat => ({
    itemId: r.item_id,
    itemName: r.item_name,
    itemSku: r.item_sku,
    totalQuantity: quantityNumber(r.total_quantity),
    totalRevenue: amountNumber(r.total_revenue),
    salesCount: r.sales_count,
  })),
});

export function presentStockCheck(lines: StockCheckLine[]): StockCheckResult {
  const items = lines.map((line) => ({
    itemId: line.itemId,
    itemName: line.item?.name ?? null,
    available: line.available,
    currentStock: line.item ? quantityNumber(line.item.currentStock) : 0,
    requested: quantityNumber(line.requested),
  }));
  return { allAvailable: items.every((i) => i.available), items };
}

export function presentLowStockReport(items: LowStockItem[], generatedAt: Date): SalesLowStockReport {
  return {
    items: items.map((item) => ({
      id: item.id,
      name: item.name,
      sku: item.sku,
      price: item.price,
      currentStock: quantityNumber(item.currentStock),
      minimumStock: quantityNumber(item.minimumStock),
      shortfall: quantityNumber(new D(item.minimumStock).minus(item.currentStock)),
      category: { id: item.category.id, name: item.category.name, color: item.category.color },
    })),
    total: items.length,
    generatedAt: generatedAt.toISOString(),
  };
}

export function presentSalesReport(report: SalesReportRecord, page: number, limit: number): SalesReport {
  return {
    success: true,
    data: {
      summary: {
        totalSales: report.summary.totalSales,
        totalAmount: report.summary.totalAmount.toNumber(),
        uniqueChargeCodes: report.summary.uniqueChargeCodes,
      },
      departmentSummary: report.departments.map((d) => ({
        department: d.department,
        totalSales: d.totalSales,
        totalAmount: d.totalAmount.toNumber(),
      })),
      sales: report.sales.map((r) => ({
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
        items: r.lines.map((l) => ({
          itemName: l.item_name,
          itemSku: l.item_sku,
          quantity: l.quantity,
          unitPrice: l.unit_price,
        })),
      })),
      pagination: pageInfo(page, limit, report.summary.totalSales),
    },
  };
}

export const REPORT_CSV_HEADER =
  'Sale ID,Charge Code,Total Amount,Customer Info,Notes,Status,Processed By,Date,Items Count';

const customerInfo = (r: { delivered_to: string | null; delivered_to_email: string | null }) =>
  [r.delivered_to, r.delivered_to_email ? `<${r.delivered_to_email}>` : null].filter(Boolean).join(' ');

const fullName = (u: { first_name: string | null; last_name: string | null }) =>
  [u.first_name, u.last_name].filter(Boolean).join(' ');

// text cells through spreadsheetText (no formula injection); the total stays a number
const csvRow = ({ sale: r, processedBy, itemsCount }: CsvSaleRecord) => [
  spreadsheetText(r.sale_id),
  spreadsheetText(r.charge_code),
  r.total_amount,
  spreadsheetText(customerInfo(r)),
  spreadsheetText(r.customer_notes),
  spreadsheetText(r.status),
  spreadsheetText(processedBy ? fullName(processedBy) : ''),
  r.created_at.toISOString(),
  String(itemsCount),
];

/**
 * The CSV report on out: writes the header, and answers the function that writes each batch of
 * sales, settling once out has taken it (back-pressure). Every value double-quoted.
 */
export async function salesReportCsvWriter(out: Writable): Promise<(batch: CsvSaleRecord[]) => Promise<void>> {
  const write = async (chunk: string) => {
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const { stringify } = await import('csv-stringify/sync');
  await write(`${REPORT_CSV_HEADER}\n`);
  return (batch) => write(stringify(batch.map(csvRow), { quoted: true, quoted_empty: true }));
}
