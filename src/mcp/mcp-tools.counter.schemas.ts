import { z } from 'zod';
import { CreateNote, Note, ReferenceParams } from '../modules/notes/notes.schemas';
import { RefundBody, SaleIdParams, SalesQuery } from '../modules/sales/sales.schemas';
import { QuoteList } from '../modules/sales/quotes.schemas';

/** The /mcp tools of the counter: the API's own request and answer schemas, as for purchasing. */

export const FindSalesInput = SalesQuery.omit({ unpaidOnly: true });
export const FindQuotesInput = z.object({
  search: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe('a quote number (exact or its start, e.g. Q1001), or part of the charge code or of the customer notes'),
  limit: z.number().int().min(1).max(100).default(20).describe('at most this many quotes (1 to 100, default 20)'),
});
export const FindQuotesOutput = QuoteList;
export const ListNotesInput = ReferenceParams;
export const NotesOutput = z.object({ notes: z.array(Note) });
export const AddNoteInput = CreateNote;
export const NoteOutput = z.object({ note: Note });
export const RefundSaleInput = RefundBody.extend({
  saleId: SaleIdParams.shape.id.describe("the sale's numeric id (id in find_sales)"),
});
