// Runs in a worker thread of the PDF reader pool (invoices.pdf.ts): pdf.js is CPU- and
// memory-hungry, and so is reading an invoice's lines out of its text; here neither blocks the
// event loop that serves the counter, nor keeps its heap in the main thread once the worker
// retires. The main thread receives only what the parser read, never the text.
import { PDFParse } from 'pdf-parse';
import { parseInvoiceText, type ParsedInvoice } from './invoices.parser';

export type PdfReadResult = { extracted: ParsedInvoice } | { unreadable: string };

/**
 * What the parser reads from the text of the first pages; a document pdf.js refuses is a
 * result (the file's fault), not an error.
 */
export default async function readPdfInvoice({ data, maxPages }: { data: Uint8Array; maxPages: number }): Promise<PdfReadResult> {
  const parser = new PDFParse({ data });
  let text: string;
  try {
    text = (await parser.getText({ first: maxPages })).text;
  } catch (err) {
    return { unreadable: err instanceof Error ? err.message : String(err) };
  } finally {
    await parser.destroy().catch(() => undefined);
  }
  return { extracted: parseInvoiceText(text) };
}
