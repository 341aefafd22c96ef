import { D, money, quantityNumber } from '../../lib/money';
import { presentOrderDetail } from '../orders/orders.present';
import { lineTotal, type ReplenishmentOutcome, type SuggestionRow, type Suggestions } from './replenishment.service';

function presentReplenishmentItem(row: SuggestionRow) {
  return {
    item: { id: row.item_id, name: row.name, sku: row.sku },
    currentStock: quantityNumber(row.current_stock),
    minimumStock: quantityNumber(row.minimum_stock),
    reorderQuantity: row.reorder_quantity === null ? null : quantityNumber(row.reorder_quantity),
    target: quantityNumber(row.target),
    onOrder: quantityNumber(row.on_order),
    quantity: quantityNumber(row.quantity),
  };
}

/** GET /replenishment: quantities as JSON numbers (as on items), prices and totals as decimal strings (as on orders). */
export function presentSuggestions({ suppliers, withoutSource, covered }: Suggestions) {
  return {
    suppliers: suppliers.map((s) => ({
      supplier: { id: s.supplierId, name: s.supplierName },
      lines: s.lines.map((row) => ({
        ...presentReplenishmentItem(row),
        sourceId: row.source_id!,
        preferred: row.preferred!,
        unitPrice: row.price!,
        lineTotal: lineTotal(row),
      })),
      total: money(s.lines.reduce((sum, row) => sum.plus(lineTotal(row)), new D(0))),
    })),
    withoutSource: withoutSource.map(presentReplenishmentItem),
    covered: covered.map(presentReplenishmentItem),
  };
}

/** POST /replenishment/orders: the orders created and the short items nothing could be ordered from. */
export function presentReplenishmentOrders({ orders, withoutSource }: ReplenishmentOutcome) {
  const without = withoutSource.length > 0 ? `; ${withoutSource.length} short item(s) have no source` : '';
  return {
    message:
      orders.length === 0
        ? `Nothing to order: no item is short of its target beyond what pending orders bring${without}`
        : `Created ${orders.length} order(s) from replenishment: ${orders.map((o) => o.order.order_id).join(', ')}${without}`,
    orders: orders.map((order) => presentOrderDetail(order)),
    withoutSource: withoutSource.map(presentReplenishmentItem),
  };
}
