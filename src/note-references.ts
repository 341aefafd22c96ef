import { chargeCodeExists } from './modules/chargecodes/chargecodes.queries';
import { itemExists } from './modules/items/items.queries';
import { registerNoteReferences } from './modules/notes/notes.references';
import { orderExists } from './modules/orders/orders.queries';
import { saleExists } from './modules/sales/sales.queries';
import { supplierExists } from './modules/suppliers/suppliers.queries';

const recordId = /^\d{1,10}$/;

/**
 * Tells the notes module how to find each kind of record a note names: the owners' own checks,
 * composed here because the owners import notes and notes may not import them (issue 41).
 */
export function registerOwnersWithNotes(): void {
  registerNoteReferences({
    item: async (db, id) => recordId.test(id) && itemExists(db, Number(id)),
    vendor: supplierExists,
    order: async (db, id) => recordId.test(id) && orderExists(db, Number(id)),
    sale: async (db, id) => recordId.test(id) && saleExists(db, Number(id)),
    charge_code: chargeCodeExists,
  });
}
