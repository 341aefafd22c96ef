import type { Db } from '../db/knex';
import { Forbidden } from '../http/errors';
import { presentNote } from '../modules/notes/notes.present';
import { notesService } from '../modules/notes/notes.service';
import { presentQuoteList } from '../modules/sales/quotes.present';
import { quotesService } from '../modules/sales/quotes.service';
import { presentSaleRefund, presentSalesPage } from '../modules/sales/sales.present';
import { SaleRefund, SalesPage } from '../modules/sales/sales.schemas';
import { salesService } from '../modules/sales/sales.service';
import { usersService } from '../modules/users/users.service';
import type { AddTool, ToolContext } from './mcp-tool-spec';
import {
  AddNoteInput,
  FindQuotesInput,
  FindQuotesOutput,
  FindSalesInput,
  ListNotesInput,
  NoteOutput,
  NotesOutput,
  RefundSaleInput,
} from './mcp-tools.counter.schemas';

const READ = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * Sales, quotes and notes, through the same services as the API and with its rules: finding sales and quotes and
 * reading notes for every key; adding notes and refunds for a key with the write scope, a refund only while
 * the key's creator holds the refund permission.
 */
export function registerCounterTools(addTool: AddTool, db: Db, context: ToolContext) {
  const sales = salesService(db);
  const notes = notesService(db);
  const creator = context.key.creator;

  addTool('find_sales', {
    title: 'Find sales',
    description:
      "Sales, newest first, with their lines: search finds a sale number (exact or its start), part of the recipient's name or email, or part " +
      'of the SKU or name of any line; chargeCode is part of the code; startDate/endDate bound the day (inclusive). Paged.',
    input: FindSalesInput,
    output: SalesPage,
    annotations: READ,
    run: async ({ page, limit, ...filter }) => presentSalesPage(await sales.list(filter, page, limit), page, limit),
  });

  addTool('find_quotes', {
    title: 'Find draft quotes',
    description:
      'Draft quotes, most recently updated first, with their lines: by quote number (exact or its start), part of the charge code or of the customer ' +
      "notes. As the key's creator sees them: every quote for a manager or admin.",
    input: FindQuotesInput,
    output: FindQuotesOutput,
    annotations: READ,
    run: async ({ search, limit }) => presentQuoteList(await quotesService(db).find(creator, search, limit)),
  });

  addTool('list_notes', {
    title: 'Notes on a record',
    description:
      'The notes on one record, newest first: referenceType item, sale, order, charge_code or vendor, and its id.',
    input: ListNotesInput,
    output: NotesOutput,
    annotations: READ,
    run: async ({ referenceType, referenceId }) => ({
      notes: (await notes.listFor(referenceType, referenceId)).map(presentNote),
    }),
  });

  if (!context.canWrite) return;

  addTool('add_note', {
    title: 'Add a note',
    description:
      "Adds a note to a record (referenceType item, sale, order, charge_code or vendor, and its id), written by the key's creator.",
    input: AddNoteInput,
    output: NoteOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (note) => ({ note: presentNote(await notes.create({ ...note, createdBy: creator.id })) }),
  });

  addTool('refund_sale', {
    title: 'Refund a sale',
    description:
      'Refunds quantities of lines of a sale (itemId and refundQty, within what is left unrefunded): the stock goes back in through the ledger ' +
      "and a note documents the refund on the sale. Needs the key's creator to hold the sales.refund permission.",
    input: RefundSaleInput,
    output: SaleRefund,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async ({ saleId, ...refund }) => {
      if (!(await usersService(db).hasPermission(creator, 'sales.refund'))) {
        throw Forbidden("Refunds need the sales.refund permission, which the key's creator does not hold");
      }
      return presentSaleRefund(await sales.refund(context.actor, saleId, refund));
    },
  });
}
