import { D, money, quantityNumber } from '../../lib/money';
import type { ParsedInvoice } from '../invoices/invoices.parser';
import { presentExtracted, presentStoredInvoice } from '../invoices/invoices.present';
import type { InvoiceMeta } from '../invoices/invoices.service';
import type { ImportOutcome } from './orders.import';
import type { AddToInventoryOutcome, ReceiveOutcome } from './orders.receive';
import type { OrderDetail, OrderLineRow, OrderListRow, OrderRow } from './orders.service';

/** costPrices false: totals and unit costs are answered null (access.profile strict, below manager) */
export function presentOrder(row: OrderListRow, costPrices = true) {
  return {
    id: row.id,
    orderId: row.order_id,
    supplierId: row.supplier_id,
    supplier: { id: row.supplier_id, name: row.supplier_name },
    status: row.status,
    totalAmount: costPrices ? row.total_amount : null,
    notes: row.notes,
    invoiceNumber: row.invoice_number,
    hasInvoice: row.has_invoice,
    itemCount: row.item_count,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    receivedAt: row.received_at ? row.received_at.toISOString() : null,
  };
}

export function presentOrderLine(row: OrderLineRow, costPrices = true) {
  return {
    orderItemId: row.id,
    itemId: row.item_id,
    name: row.name,
    sku: row.sku,
    quantity: quantityNumber(row.quantity),
    receivedQuantity: quantityNumber(row.received_quantity),
    outstandingQuantity: quantityNumber(new D(row.quantity).minus(row.received_quantity)),
    unitCost: costPrices ? row.unit_cost : null,
    lineTotal: costPrices ? money(new D(row.quantity).times(row.unit_cost)) : null,
  };
}

export const presentOrderDetail = ({ order, lines }: OrderDetail, costPrices = true) => ({
  ...presentOrder(order, costPrices),
  items: lines.map((line) => presentOrderLine(line, costPrices)),
});

export const presentOrderList = (rows: OrderListRow[], costPrices: boolean) =>
  rows.map((row) => presentOrder(row, costPrices));

/** POST /orders/import-from-invoice: the new order, how its supplier and lines were matched, and what the PDF said. */
export function presentImportResult(result: ImportOutcome) {
  const order = presentOrderDetail(result.detail);
  return {
    success: true,
    message: `Order ${order.orderId} created with ${order.items.length} line(s), ${result.matchedItems} matched to inventory items`,
    order,
    supplierCreated: result.supplierCreated,
    matchedItems: result.matchedItems,
    unmatchedItems: result.unmatchedItems,
    ...(result.extracted ? { extractedData: presentExtracted(result.extracted) } : {}),
  };
}

/** POST /orders/{id}/receive: the order after the receipt and the stock movements it made. */
export function presentReceiveResult({ detail, movements }: ReceiveOutcome) {
  const order = presentOrderDetail(detail);
  return {
    message:
      order.status === 'received'
        ? `Order ${order.orderId} fully received`
        : `Order ${order.orderId} partially received`,
    order,
    stockMovements: movements.map((m) => ({
      itemId: m.item_id!,
      quantity: quantityNumber(m.quantity),
      previousStock: quantityNumber(m.previous_stock),
      newStock: quantityNumber(m.new_stock),
    })),
  };
}

/** POST /orders/{id}/add-to-inventory: the items created, by order line, and the order. */
export function presentAddToInventoryResult({ created, detail }: AddToInventoryOutcome) {
  return {
    message:
      created.length === 0
        ? 'No received lines without an inventory item'
        : `Created ${created.length} inventory item(s)`,
    createdItems: created.map(({ orderItemId, item }) => ({
      orderItemId,
      item: { id: item.id, name: item.name, sku: item.sku, categoryId: item.category_id },
    })),
    order: presentOrderDetail(detail),
  };
}

/** POST /orders/{id}/upload-invoice: the stored invoice and what was read from it. */
export function presentAttachedInvoice({
  order,
  stored,
  extracted,
}: {
  order: OrderRow;
  stored: InvoiceMeta;
  extracted: ParsedInvoice;
}) {
  return {
    success: true,
    message: `Invoice attached to order ${order.order_id}`,
    invoice: presentStoredInvoice(order.order_id, stored),
    extractedData: presentExtracted(extracted),
  };
}
