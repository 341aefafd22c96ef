import type { Db } from '../../db/knex';
import { chargeCodeExists } from '../chargecodes/chargecodes.queries';
import { itemExists } from '../items/items.queries';
import { orderExists } from '../orders/orders.queries';
import { saleExists } from '../sales/sales.queries';
import { supplierExists } from '../suppliers/suppliers.queries';

/**
 * The entities a note can be attached to, and how to tell whether one exists.
 * Each owning module contributes its line; an unknown type is a 400, a missing entity a 404.
 */
export const NOTE_REFERENCE_TYPES: Record<string, (db: Db, referenceId: string) => Promise<boolean>> = {
  item: async (db, id) => /^\d{1,10}$/.test(id) && itemExists(db, Number(id)),
  vendor: supplierExists,
  order: async (db, id) => /^\d{1,10}$/.test(id) && orderExists(db, Number(id)),
  sale: async (db, id) => /^\d{1,10}$/.test(id) && saleExists(db, Number(id)),
  charge_code: chargeCodeExists,
};
