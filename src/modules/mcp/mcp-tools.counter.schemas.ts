import { z } from 'zod';
import { CreateNote, Note, ReferenceParams } from '../notes/notes.schemas';
import { RefundBody, SaleIdParams, SalesQuery } from '../sales/sales.schemas';

/** The /mcp tools of the counter: the API's own request and answer schemas, as for purchasing. */

export const FindSalesInput = SalesQuery.omit({ unpaidOnly: true });
export const ListNotesInput = ReferenceParams;
export const NotesOutput = z.object({ notes: z.array(Note) });
export const AddNoteInput = CreateNote;
export const NoteOutput = z.object({ note: Note });
export const RefundSaleInput = RefundBody.extend({ saleId: SaleIdParams.shape.id.describe("the sale's numeric id (id in find_sales)") });
