import { presentItemSource } from '../sources/sources.present';
import type { ItemSourceRow } from '../sources/sources.service';
import type { Supplier, SupplierDeletionCheck } from './suppliers.schemas';
import type { SupplierRow } from './suppliers.service';

export function presentSupplier(row: SupplierRow): Supplier {
  return {
    id: row.id,
    name: row.name,
    contact: row.contact,
    email: row.email,
    phone: row.phone,
    address: row.address,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** GET /suppliers/{id}: the supplier and its item links, their prices null when the caller may not read cost prices. */
export const presentSupplierWithItems = (supplier: SupplierRow, links: ItemSourceRow[], costPrices: boolean) => ({
  ...presentSupplier(supplier),
  items: links.map((link) => presentItemSource(link, costPrices)),
});

export const presentSupplierDeletionCheck = ({
  canDelete,
  reasons,
}: {
  canDelete: boolean;
  reasons: string[];
}): SupplierDeletionCheck => ({
  canDelete,
  reasons,
});
