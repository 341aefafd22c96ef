import type { ItemSource } from './sources.schemas';
import type { ItemSourceRow } from './sources.service';

export function presentItemSource(row: ItemSourceRow): ItemSource {
  return {
    id: row.id,
    supplierId: row.supplier_id,
    itemId: row.item_id,
    price: row.price,
    notes: row.notes,
    supplierSku: row.supplier_sku,
    preferred: row.preferred,
    createdAt: row.created_at.toISOString(),
    item: { id: row.item_id, name: row.item_name, sku: row.item_sku, isActive: row.item_is_active },
  };
}
