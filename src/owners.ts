import { failedSignInReferences } from './auth/failed-sign-ins';
import { apiTokenReferences } from './auth/tokens.service';
import { registerReferenceCounters } from './db/references';
import { archivesReferences } from './modules/archives/archives.service';
import { basketsReferences } from './modules/catalogue/baskets.service';
import { chargeCodeExists, chargeCodesReferences } from './modules/chargecodes/chargecodes.queries';
import { emailsReferences } from './modules/emails/emails.queries';
import { invoicesReferences } from './modules/invoices/invoices.queries';
import { itemExists, itemsReferences } from './modules/items/items.queries';
import { lotsReferences } from './modules/lots/lots.queries';
import { mcpKeysReferences } from './modules/mcp-keys/mcp-keys.service';
import { registerNoteReferences } from './modules/notes/notes.references';
import { notesReferences } from './modules/notes/notes.queries';
import { notificationsReferences } from './modules/notifications/notifications.service';
import { orderExists, ordersReferences } from './modules/orders/orders.queries';
import { outboundWebhooksReferences } from './modules/outbound-webhooks/outbound-webhooks.queries';
import { requestsReferences } from './modules/requests/requests.service';
import { safetyDataSheetsReferences } from './modules/safety-data-sheets/safety-data-sheets.queries';
import { saleExists, salesReferences } from './modules/sales/sales.queries';
import { settingsReferences } from './modules/settings/settings.service';
import { sourcesReferences } from './modules/sources/sources.queries';
import { stockMovementsReferences } from './modules/stock-movements/stock-movements.queries';
import { stocktakesReferences } from './modules/stocktakes/stocktakes.queries';
import { supplierExists } from './modules/suppliers/suppliers.queries';
import { usersReferences } from './modules/users/users.queries';

const recordId = /^\d{1,10}$/;

/*
 * The composition root's wiring of owners to the modules that ask them (issue 41). An owner
 * imports the module whose records it points at (a sale names its items, an item carries notes),
 * so that module cannot import the owner back without a cycle: buildApp hands it the owners'
 * own functions here instead.
 */

/**
 * Registers the owners' record checks with the notes module (does the item, supplier, order,
 * sale or charge code a note names exist?) and every owner's reference counters for the deletion
 * checks of items, categories, suppliers and users (test/references.test.ts checks that they
 * cover every foreign key to those tables).
 */
export function composeOwners(): void {
  registerNoteReferences({
    item: async (db, id) => recordId.test(id) && itemExists(db, Number(id)),
    vendor: supplierExists,
    order: async (db, id) => recordId.test(id) && orderExists(db, Number(id)),
    sale: async (db, id) => recordId.test(id) && saleExists(db, Number(id)),
    charge_code: chargeCodeExists,
  });
  registerReferenceCounters([
    apiTokenReferences,
    archivesReferences,
    basketsReferences,
    chargeCodesReferences,
    emailsReferences,
    failedSignInReferences,
    invoicesReferences,
    itemsReferences,
    lotsReferences,
    mcpKeysReferences,
    notesReferences,
    notificationsReferences,
    ordersReferences,
    outboundWebhooksReferences,
    requestsReferences,
    safetyDataSheetsReferences,
    salesReferences,
    settingsReferences,
    sourcesReferences,
    stockMovementsReferences,
    stocktakesReferences,
    usersReferences,
  ]);
}
