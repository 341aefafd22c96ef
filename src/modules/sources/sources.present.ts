import type { ItemSource } from './sources.schemas';
import type { ItemSourceRow } from './sources.service';

/** costPrices false: the supplier's price is answered null (access.profile strict, below manager) */
export function presentItemSource(row: ItemSourceRow, costPrices = true): ItemSource {
  return {
    id: row.id,
    supplierId: row.supplier_id,
    itemId: row.item_id,
    price: costPrices ? row.price : null,
    notes: row.notes,
    supplierSku: row.supplier_sku,
    preferred: row.preferred,
    createdAt: row.created_at.toISOString(),
    item: { id: row.item_id, name: row.item_name, sku: row.item_sku, isActive: row.item_is_active },
  };
}
