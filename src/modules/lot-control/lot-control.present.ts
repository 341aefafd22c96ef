import { pageInfo } from '../../http/pagination';
import { quantityNumber } from '../../lib/money';
import { spreadsheetText } from '../../lib/spreadsheet-safe';
import { presentLot } from '../lots/lots.present';
import type { ListedLot, LotsPage, LotTrace } from './lot-control.schemas';
import type { LotRecallRecord, LotTraceRecord, LotView, TracedSale } from './lot-control.service';

export const presentListedLot = ({ row, item, today, warningDays }: LotView): ListedLot => ({
  ...presentLot(row, today, warningDays),
  quarantinedAt: row.quarantined_at?.toISOString() ?? null,
  quarantineReason: row.quarantine_reason,
  item,
});

export const presentLotsPage = (
  { lots, total }: { lots: LotView[]; total: number },
  page: number,
  limit: number,
): LotsPage => ({ lots: lots.map(presentListedLot), pagination: pageInfo(page, limit, total) });

const presentTracedSale = (sale: TracedSale): LotTrace['sales'][number] => ({
  saleId: sale.saleId,
  saleNumber: sale.saleNumber,
  chargeCode: sale.chargeCode,
  deliveredTo: sale.deliveredTo,
  deliveredToEmail: sale.deliveredToEmail,
  quantity: quantityNumber(sale.quantity),
  soldAt: sale.soldAt.toISOString(),
});

export const presentLotTrace = ({ lot, received, sales, movements }: LotTraceRecord): LotTrace => ({
  lot: presentListedLot(lot),
  item: lot.item,
  received: received.map((receipt) => ({
    orderId: receipt.orderId,
    orderNumber: receipt.orderNumber,
    supplier: receipt.supplier,
    quantity: quantityNumber(receipt.quantity),
    receivedAt: receipt.receivedAt.toISOString(),
  })),
  sales: sales.map(presentTracedSale),
  movements: movements.map((movement) => ({
    id: movement.id,
    type: movement.type,
    quantity: quantityNumber(movement.lot_quantity),
    reason: movement.reason,
    referenceType: movement.reference_type,
    referenceId: movement.reference_id,
    performedBy: movement.performed_by,
    createdAt: movement.created_at.toISOString(),
  })),
  remaining: quantityNumber(lot.row.quantity),
});

/** The trace's CSV: a row per sale that took the lot, for the recall's spreadsheet (typed text neutralised for spreadsheets). */
export const LOT_TRACE_CSV_COLUMNS = [
  'SKU',
  'Item',
  'Lot',
  'Expires on',
  'Sale',
  'Sold at',
  'Charge code',
  'Delivered to',
  'Delivered to email',
  'Quantity',
];

export const lotTraceCsvRecords = ({ lot, sales }: LotTraceRecord): unknown[][] =>
  sales.map((sale) => [
    spreadsheetText(lot.item.sku),
    spreadsheetText(lot.item.name),
    spreadsheetText(lot.row.lot_number),
    lot.row.expires_on ?? '',
    sale.saleNumber,
    sale.soldAt.toISOString(),
    spreadsheetText(sale.chargeCode),
    spreadsheetText(sale.deliveredTo),
    spreadsheetText(sale.deliveredToEmail),
    quantityNumber(sale.quantity),
  ]);

/** The lot.recalled event's data: the lot with its item, the message, the sales that took it, how many addresses were emailed. */
export const presentLotRecall = ({ lot, message, sales, notified }: LotRecallRecord) => ({
  lot: presentListedLot(lot),
  message,
  sales: sales.map(presentTracedSale),
  notified,
});
