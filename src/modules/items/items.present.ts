import { quantityNumber } from '../../lib/money';
import { presentCategoryRef } from '../categories/categories.present';
import type { MovementReadRow } from '../stock-movements/stock-movements.service';
import { presentMovement } from '../stock-movements/stock-movements.present';
import { presentJoinedUserRef } from '../users/users.present';
import type { BulkOutcome, ImportOutcome } from './items.bulk';
import type { Barcode, ImportResult, Item, ItemDeletionCheck, ItemDetail } from './items.schemas';
import type { BarcodeRow } from './item-barcodes.service';
import { hazardOf, type ItemOrderHistoryRow, type ItemReadRow } from './items.service';
import { presentHazard } from '../hazards/hazards.present';

export function presentItem(row: ItemReadRow): Item {
  return {
    id: row.id,
    name: row.name,
    sku: row.sku,
    description: row.description,
    categoryId: row.category_id,
    category: presentCategoryRef({
      id: row.category_id,
      name: row.category_name,
      description: row.category_description,
      icon: row.category_icon,
      color: row.category_color,
    }),
    price: row.price,
    vatRate: row.vat_rate,
    usesDefaultVatRate: row.own_vat_rate === null,
    currentStock: quantityNumber(row.current_stock),
    minimumStock: quantityNumber(row.minimum_stock),
    reorderQuantity: row.reorder_quantity == null ? null : quantityNumber(row.reorder_quantity),
    isActive: row.is_active,
    createdBy: row.created_by,
    creator: presentJoinedUserRef(row.created_by, {
      email: row.creator_email,
      firstName: row.creator_first_name,
      lastName: row.creator_last_name,
    }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastCountedAt: row.last_counted_at ? row.last_counted_at.toISOString() : null,
    tracking: row.tracking,
    shelfLifeDays: row.shelf_life_days,
    hazard: presentHazard(hazardOf(row)),
    coshhRequired: row.coshh_required,
    needsCoshhReference: row.needs_coshh_reference,
    restricted: row.restricted,
  };
}

/** One item as GET /items/{id} and GET /items/lookup answer it: the item and its barcodes' codes. */
export const presentItemDetail = (row: ItemReadRow, barcodes: string[]): ItemDetail => ({
  ...presentItem(row),
  barcodes,
});

export const presentBarcode = (row: BarcodeRow): Barcode => ({
  id: row.id,
  code: row.code,
  kind: row.kind,
  note: row.note,
  createdAt: row.created_at.toISOString(),
});

export const presentItemList = ({ rows, total }: { rows: ItemReadRow[]; total: number }) => ({
  items: rows.map(presentItem),
  total,
});

/** The answer of POST /items/{id}/stock: the item after the change and the movement as read back. */
export const presentStockChange = (item: ItemReadRow, movement: MovementReadRow) => ({
  message: 'Stock updated',
  item: presentItem(item),
  movement: presentMovement(movement),
});

/** GET /items/{id}/stock-movements: the item's movements in the shape of GET /api/stock-movements. */
export const presentItemMovements = (rows: MovementReadRow[]) => ({ movements: rows.map(presentMovement) });

/** GET /items/{id}/order-history: quantities and the unit cost as JSON numbers, the supplier by name. */
/** costPrices false: unit costs are answered null (access.profile strict, below manager) */
export const presentItemOrderHistory = (rows: ItemOrderHistoryRow[], costPrices: boolean) => ({
  orders: rows.map((r) => ({
    orderId: r.order_id,
    orderDate: r.created_at.toISOString(),
    supplier: r.supplier,
    quantity: quantityNumber(r.quantity),
    receivedQuantity: quantityNumber(r.received_quantity),
    unitCost: costPrices ? Number(r.unit_cost) : null,
    status: r.status,
  })),
});

export const presentItemDeletionCheck = ({
  canDelete,
  reasons,
}: {
  canDelete: boolean;
  reasons: string[];
}): ItemDeletionCheck => ({ canDelete, reasons });

const items = (n: number) => `${n} item${n === 1 ? '' : 's'}`;

/** A bulk action's {success, message}, the message naming what was done to how many items. */
export function presentBulkOutcome(outcome: BulkOutcome) {
  const done = (message: string) => ({ success: true as const, message });
  switch (outcome.action) {
    case 'delete':
      return done(`${items(outcome.count)} permanently deleted`);
    case 'setActive':
      return done(`${items(outcome.count)} marked ${outcome.active ? 'active' : 'inactive'}`);
    case 'setStockZero':
      return done(`Stock set to zero for ${items(outcome.count)} (${outcome.changed} changed)`);
    case 'addNote':
      return done(`Note added to ${items(outcome.count)}`);
    case 'changeVatRate':
      return done(`VAT rate set to ${outcome.vatRate} for ${items(outcome.count)}`);
    case 'changeCategory':
      return done(`${items(outcome.count)} moved to category '${outcome.categoryName}'`);
  }
}

/** The import's counts, and one message per failed item prefixed with its 1-based position. */
export function presentImportOutcome({ successful, errors }: ImportOutcome): ImportResult {
  return { successful, failed: errors.length, errors: errors.map((e) => `Item ${e.position}: ${e.message}`) };
}
